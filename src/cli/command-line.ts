/**
 * Parses one command's arguments against its declaration with Node's
 * `util.parseArgs`, in its lenient mode with tokens, so every refusal is
 * worded here: parseArgs's own strict-mode messages quote the offending
 * option inside an unbalanced quote (`as in '-- "--help"`).
 *
 * A value may start with a dash (`--content -5`): a string flag always takes
 * the next argument. `-h`/`--help` anywhere before `--` asks for help, even
 * on a line that would not parse otherwise.
 */
import { parseArgs } from 'node:util';
import { SETTING_FLAG } from '../config/load.js';
import { flagsOf, UsageError, type Command, type FlagSpecs } from './command.js';

export interface ParsedLine {
  readonly help: boolean;
  readonly values: Record<string, string | boolean | string[] | undefined>;
  readonly args: string[];
  readonly settings: string[];
}

/** `--section.key=value` and `--section.key value` pulled out of `argv`; the rest is left for parseArgs. */
function splitSettings(argv: readonly string[]): { settings: string[]; rest: string[] } {
  const settings: string[] = [];
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--') {
      rest.push(...argv.slice(i));
      break;
    }
    const setting = SETTING_FLAG.exec(arg);
    if (setting === null) rest.push(arg);
    else if (setting[3] !== undefined) settings.push(arg);
    else {
      const value = argv[i + 1];
      if (value === undefined) throw new UsageError(`${arg} needs a value`);
      settings.push(`${arg}=${value}`);
      i++;
    }
  }
  return { settings, rest };
}

function flagName(rawName: string, flags: FlagSpecs, name: string): string {
  return rawName.startsWith('--') || flags[name]?.short === undefined ? `--${name}` : `-${flags[name]?.short} (--${name})`;
}

export function parseCommandLine(command: Command, argv: readonly string[]): ParsedLine {
  const flags = flagsOf(command);
  const { settings, rest } = command.settings ? splitSettings(argv) : { settings: [], rest: [...argv] };
  const options = Object.fromEntries(
    Object.entries(flags).map(([name, spec]) => [name, { type: spec.type, ...(spec.short === undefined ? {} : { short: spec.short }), ...(spec.multiple ? { multiple: true } : {}) }]),
  );
  const { tokens } = parseArgs({ args: rest, options, strict: false, allowPositionals: true, tokens: true });
  const values: Record<string, string | boolean | string[] | undefined> = {};
  const args: string[] = [];
  let help = false;
  const problems: string[] = [];
  for (const token of tokens) {
    if (token.kind === 'positional') {
      args.push(token.value);
      continue;
    }
    if (token.kind !== 'option') continue;
    const spec = Object.hasOwn(flags, token.name) ? flags[token.name] : undefined;
    if (spec === undefined) {
      problems.push(`unknown option '${token.rawName}'`);
      continue;
    }
    if (token.name === 'help') help = true;
    if (spec.type === 'boolean') {
      if (token.value !== undefined) problems.push(`${flagName(token.rawName, flags, token.name)} takes no value`);
      else values[token.name] = true;
      continue;
    }
    if (token.value === undefined) {
      problems.push(`${flagName(token.rawName, flags, token.name)} needs a value${spec.value === undefined ? '' : ` (${spec.value})`}`);
      continue;
    }
    if (spec.choices !== undefined && !spec.choices.includes(token.value)) {
      problems.push(`--${token.name} must be one of ${spec.choices.join(', ')}, got '${token.value}'`);
      continue;
    }
    if (spec.multiple) values[token.name] = [...((values[token.name] as string[] | undefined) ?? []), token.value];
    else values[token.name] = token.value;
  }
  if (help) return { help, values, args, settings };
  const [problem] = problems;
  if (problem !== undefined) throw new UsageError(problem);
  for (const [name, spec] of Object.entries(flags)) {
    if (name === 'help') continue;
    if (values[name] === undefined) {
      if (spec.required) throw new UsageError(`--${name} is required`);
      if (spec.type === 'boolean') values[name] = false;
      else if (spec.multiple) values[name] = [];
    }
  }
  const required = command.args.filter((a) => !a.optional).length;
  if (args.length < required) throw new UsageError(`expected ${command.args.slice(args.length, required).map((a) => a.name).join(' ')}`);
  if (args.length > command.args.length) throw new UsageError(`unexpected argument '${args[command.args.length] ?? ''}'`);
  command.args.forEach((spec, i) => {
    const value = args[i];
    if (value !== undefined && spec.choices !== undefined && !spec.choices.includes(value)) throw new UsageError(`${spec.name} must be one of ${spec.choices.join(', ')}, got '${value}'`);
  });
  return { help, values, args, settings };
}
