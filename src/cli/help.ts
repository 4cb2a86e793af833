/**
 * The text of `--help`, written from the command declarations: what the
 * command does, its usage line, its arguments, its flags (own flags first,
 * then each group: Output, Connection, ...), and its examples. A group of
 * commands (`svc agents`) lists its subcommands.
 */
import { flagsOf, type Command, type CommandTree, type FlagSpec } from './command.js';

const INDENT = '  ';

/** Two columns, the second aligned, each row indented. */
function columns(rows: ReadonlyArray<readonly [string, string]>): string {
  const width = Math.max(...rows.map(([left]) => left.length));
  return rows.map(([left, right]) => `${INDENT}${left.padEnd(width)}   ${right}`.trimEnd()).join('\n');
}

function flagLabel(name: string, spec: FlagSpec): string {
  const short = spec.short === undefined ? '    ' : `-${spec.short}, `;
  const value = spec.type === 'string' ? ` ${spec.value ?? 'VALUE'}` : '';
  return `${short}--${name}${value}`;
}

function flagText(spec: FlagSpec): string {
  const notes = [
    ...(spec.required ? ['required'] : []),
    ...(spec.multiple ? ['repeatable'] : []),
    ...(spec.choices === undefined ? [] : [`one of ${spec.choices.join(', ')}`]),
  ];
  return notes.length === 0 ? spec.description : `${spec.description} (${notes.join('; ')})`;
}

export function usageLine(command: Command): string {
  const args = command.args.map((a) => (a.optional ? `[${a.name}]` : a.name));
  const required = Object.entries(command.flags)
    .filter(([, spec]) => spec.required)
    .map(([name, spec]) => `--${name} ${spec.value ?? 'VALUE'}`);
  return ['svc', ...command.path, ...args, ...required, '[flags]', ...(command.settings ? ['[--section.key=value]...'] : [])].join(' ');
}

export function commandHelp(command: Command): string {
  const sections: string[] = [command.summary];
  if (command.description !== undefined) sections.push(command.description.trim());
  sections.push(`Usage:\n${INDENT}${usageLine(command)}`);
  if (command.args.length > 0) sections.push(`Arguments:\n${columns(command.args.map((a) => [a.name, a.description]))}`);
  const groups = new Map<string, Array<readonly [string, string]>>([['Flags', []]]);
  for (const [name, spec] of Object.entries(flagsOf(command))) {
    const group = spec.group ?? 'Flags';
    groups.set(group, [...(groups.get(group) ?? []), [flagLabel(name, spec), flagText(spec)]]);
  }
  for (const [group, rows] of groups) if (rows.length > 0) sections.push(`${group === 'Flags' ? group : `${group} flags`}:\n${columns(rows)}`);
  if (command.settings) {
    sections.push(`Settings:\n${INDENT}--section.key=value (or --section.key value) sets any configuration setting, e.g. --runtime.max_agents=100;\n${INDENT}every setting is listed in docs/configuration.md.`);
  }
  sections.push(`Examples:\n${command.examples.map((e) => `${INDENT}# ${e.description}\n${INDENT}${e.command}`).join('\n\n')}`);
  return `${sections.join('\n\n')}\n`;
}

export function groupHelp(tree: CommandTree, path: readonly string[]): string {
  const node = tree.find(path);
  const summary = node?.summary ?? '';
  const children = tree.children(path);
  const rows = children.map((child) => [child.path.at(-1) ?? '', child.summary] as const);
  const name = ['svc', ...path].join(' ');
  const sections = [
    summary,
    `Usage:\n${INDENT}${name} <command> [flags]`,
    `Commands:\n${columns(rows)}`,
    `Run '${name} <command> --help' for a command's flags and examples.`,
  ];
  return `${sections.filter((s) => s !== '').join('\n\n')}\n`;
}
