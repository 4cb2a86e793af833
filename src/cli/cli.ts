/**
 * `svc`'s dispatcher: finds the command the words name in the command tree,
 * answers `--help` (exit 0) from its declaration, parses the rest, runs it,
 * and turns what it throws into one line on stderr and the exit code
 * scripts rely on (exit-codes.ts).
 */
import { ConfigError } from '../config/load.js';
import { isSvcError } from '../errors/svc-error.js';
import { VERSION } from '../version.js';
import type { CliIo } from './cli-io.js';
import { UsageError, type CommandTree, type FlagSpecs, type FlagValues } from './command.js';
import { parseCommandLine } from './command-line.js';
import { COMMANDS, GROUPS } from './command-table.js';
import { createCommandTree } from './command-tree.js';
import { EXIT, exitCodeFor } from './exit-codes.js';
import { commandHelp, groupHelp } from './help.js';
import { errorLine } from './output.js';

const HELP_WORDS: ReadonlySet<string> = new Set(['--help', '-h']);

let defaultTree: CommandTree | undefined;

export function commandTree(): CommandTree {
  defaultTree ??= createCommandTree(COMMANDS, GROUPS);
  return defaultTree;
}

function rootHelp(tree: CommandTree): string {
  return `svc runs and manages an application server for multi-agent systems: sandboxed WebAssembly agents
that talk in FIPA-ACL messages.

${groupHelp(tree, []).trimEnd()}

Flags:
  -h, --help      Show help (also after any command: svc agents deploy --help).
      --version   Print the version.

Exit codes: 0 ok, 1 failure, 2 usage, 3 configuration, 4 rejected, 5 not found,
6 unavailable or timed out, 7 denied, 8 limited.
`;
}

/** `svc help agents deploy` is `svc agents deploy --help`. */
function help(tree: CommandTree, words: readonly string[], io: CliIo): number {
  const { node, rest } = tree.resolve(words);
  if (rest.length > 0 || (node === undefined && words.length > 0)) {
    io.err(`svc: no command 'svc ${words.join(' ')}'\nRun 'svc --help' for the commands.\n`);
    return EXIT.usage;
  }
  io.out(node === undefined ? rootHelp(tree) : node.command === undefined ? groupHelp(tree, node.path) : commandHelp(node.command));
  return EXIT.ok;
}

function failed(error: unknown, path: readonly string[], io: CliIo): number {
  if (error instanceof UsageError) {
    io.err(`svc: ${error.message}\nRun 'svc ${path.join(' ')} --help' for usage.\n`);
    return EXIT.usage;
  }
  if (error instanceof ConfigError) {
    io.err(`svc: invalid configuration: ${error.message}\n`);
    return EXIT.config;
  }
  if (isSvcError(error)) {
    io.err(errorLine(error));
    return exitCodeFor(error.code);
  }
  io.err(`svc: ${error instanceof Error ? error.message : String(error)}\n`);
  return EXIT.failure;
}

export async function runCli(argv: readonly string[], io: CliIo, tree: CommandTree = commandTree()): Promise<number> {
  const [first, ...after] = argv;
  if (first === undefined) {
    io.err(rootHelp(tree));
    return EXIT.usage;
  }
  if (first === 'help' || HELP_WORDS.has(first)) return help(tree, after, io);
  if (first === '--version') {
    io.out(`${VERSION}\n`);
    return EXIT.ok;
  }
  const { node, path, rest } = tree.resolve(argv);
  if (node === undefined) {
    io.err(`svc: unknown command '${first}'\nRun 'svc --help' for the commands.\n`);
    return EXIT.usage;
  }
  const { command } = node;
  if (command === undefined) {
    const [next] = rest;
    if (next !== undefined && HELP_WORDS.has(next)) {
      io.out(groupHelp(tree, path));
      return EXIT.ok;
    }
    io.err(next === undefined ? groupHelp(tree, path) : `svc: unknown ${path.join(' ')} subcommand '${next}'\nRun 'svc ${path.join(' ')} --help' for its commands.\n`);
    return EXIT.usage;
  }
  try {
    const parsed = parseCommandLine(command, rest);
    if (parsed.help) {
      io.out(commandHelp(command));
      return EXIT.ok;
    }
    return await command.run({ values: parsed.values as FlagValues<FlagSpecs>, args: parsed.args, settings: parsed.settings, io, tree });
  } catch (error) {
    return failed(error, path, io);
  }
}
