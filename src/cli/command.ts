/**
 * What one `svc` command is: its place in the command tree, the text its
 * `--help` prints, the flags and arguments it takes, and what it does. Each
 * command is one file under `commands/` that exports one `Command`, listed in
 * command-table.ts; the parser, the help, the completion scripts and
 * docs/cli.md all read the same declaration, so a flag cannot be parsed
 * without being documented.
 */
import type { CliIo } from './cli-io.js';

export interface FlagSpec {
  readonly type: 'string' | 'boolean';
  /** One letter: `-o` for `--output`. */
  readonly short?: string;
  /** May be given more than once; the values arrive as a list. */
  readonly multiple?: boolean;
  /** One line for `--help`. */
  readonly description: string;
  /** How `--help` names the value: `--name NAME`. */
  readonly value?: string;
  /** The command cannot run without it. */
  readonly required?: boolean;
  /** The only values accepted; completion offers them. */
  readonly choices?: readonly string[];
  /** Values completion offers without restricting what is accepted. */
  readonly suggestions?: readonly string[];
  /** Where `--help` lists it: own flags first, then each named group. */
  readonly group?: string;
}

export type FlagSpecs = Readonly<Record<string, FlagSpec>>;

type FlagValue<S extends FlagSpec> = S['type'] extends 'boolean' ? boolean : S['multiple'] extends true ? string[] : string | undefined;

/** The parsed flags: booleans default to false, repeated flags to [], the rest to undefined. */
export type FlagValues<F extends FlagSpecs> = { readonly [K in keyof F]: FlagValue<F[K]> };

export interface ArgSpec {
  /** As `--help` shows it: `AGENT`, `FILE.wasm`. */
  readonly name: string;
  readonly description: string;
  readonly optional?: boolean;
  /** The only values accepted; completion offers them. */
  readonly choices?: readonly string[];
}

export interface Example {
  /** A line that says what the command line does. */
  readonly description: string;
  /** The command line as typed, `svc` included. */
  readonly command: string;
}

export interface CommandInput<F extends FlagSpecs> {
  readonly values: FlagValues<F>;
  /** The positional arguments, in `args` order (optional ones may be missing). */
  readonly args: readonly string[];
  /** `--section.key=value` settings, as given (commands with `settings`). */
  readonly settings: readonly string[];
  readonly io: CliIo;
  /** Every command, for the ones that describe the others (completion). */
  readonly tree: CommandTree;
}

export interface Command<F extends FlagSpecs = FlagSpecs> {
  /** Words after `svc`: `['agents', 'deploy']`. */
  readonly path: readonly string[];
  /** One line for command listings. */
  readonly summary: string;
  /** Paragraphs for `--help`, after the summary. */
  readonly description?: string;
  readonly args: readonly ArgSpec[];
  readonly flags: F;
  /** Takes `--section.key=value` (or `--section.key value`) configuration settings, as the server does. */
  readonly settings?: boolean;
  /** At least one. */
  readonly examples: readonly Example[];
  run(input: CommandInput<F>): Promise<number>;
}

export interface TreeNode {
  readonly path: readonly string[];
  readonly summary: string;
  /** Set for a command; a group has children instead. */
  readonly command?: Command;
}

export interface CommandTree {
  /** Every command, in table order. */
  readonly commands: readonly Command[];
  find(path: readonly string[]): TreeNode | undefined;
  /** The commands and groups one level below `path`, in table order. */
  children(path: readonly string[]): TreeNode[];
  /**
   * The longest prefix of `words` that names a node, and what is left: `agents deploy x.wasm`
   * gives the deploy command and `['x.wasm']`.
   */
  resolve(words: readonly string[]): { node: TreeNode | undefined; path: readonly string[]; rest: readonly string[] };
}

/** Keeps the flags' types for `run` while the table holds every command as a plain `Command`. */
export function defineCommand<F extends FlagSpecs>(command: Command<F>): Command {
  return command as unknown as Command;
}

/** A command line that does not parse; printed with a pointer to `--help`, exit 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** The `-h`/`--help` flag every command takes. */
export const HELP_FLAG = { type: 'boolean', short: 'h', description: 'Show this help and exit.' } as const satisfies FlagSpec;

/** A command's flags as parsed and documented: its own, and `--help`. */
export function flagsOf(command: Command): FlagSpecs {
  return { ...command.flags, help: HELP_FLAG };
}
