/**
 * What both completion scripts are generated from: per group, its
 * subcommands; per command, its flags and how each value completes.
 */
import { flagsOf, type CommandTree, type FlagSpec } from './command.js';

/** How a flag's value (or a command's argument) completes. */
export type ValueCompletion = { kind: 'words'; words: readonly string[] } | { kind: 'file' } | { kind: 'free' };

export interface CompletedFlag {
  readonly name: string;
  readonly short: string | undefined;
  readonly description: string;
  readonly multiple: boolean;
  /** Undefined for a boolean flag. */
  readonly value: { readonly label: string; readonly completion: ValueCompletion } | undefined;
}

export interface CompletedCommand {
  readonly path: string;
  readonly flags: readonly CompletedFlag[];
  readonly args: ReadonlyArray<{ readonly name: string; readonly completion: ValueCompletion }>;
}

export interface CompletedGroup {
  readonly path: string;
  readonly children: ReadonlyArray<{ readonly name: string; readonly summary: string }>;
}

export interface CompletionModel {
  readonly groups: readonly CompletedGroup[];
  readonly commands: readonly CompletedCommand[];
}

/** A placeholder naming a file (`FILE`, `FILE.wasm`) completes file names. */
function completionOf(label: string, spec?: Pick<FlagSpec, 'choices' | 'suggestions'>): ValueCompletion {
  const words = spec?.choices ?? spec?.suggestions;
  if (words !== undefined) return { kind: 'words', words };
  return /FILE/.test(label) ? { kind: 'file' } : { kind: 'free' };
}

export function completionModel(tree: CommandTree): CompletionModel {
  const groupPaths = new Set<string>(['']);
  for (const command of tree.commands) for (let depth = 1; depth < command.path.length; depth++) groupPaths.add(command.path.slice(0, depth).join(' '));
  const groups = [...groupPaths].map((path) => ({
    path,
    children: tree.children(path === '' ? [] : path.split(' ')).map((node) => ({ name: node.path.at(-1) ?? '', summary: node.summary })),
  }));
  const commands = tree.commands.map((command) => ({
    path: command.path.join(' '),
    flags: Object.entries(flagsOf(command)).map(([name, spec]) => ({
      name,
      short: spec.short,
      description: spec.description,
      multiple: spec.multiple === true,
      value: spec.type === 'boolean' ? undefined : { label: spec.value ?? 'VALUE', completion: completionOf(spec.value ?? '', spec) },
    })),
    args: command.args.map((arg) => ({ name: arg.name, completion: completionOf(arg.name, arg) })),
  }));
  return { groups, commands };
}
