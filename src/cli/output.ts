/**
 * What the commands print, in the form `-o` asks for, as kubectl does:
 * `table` for people (aligned columns), `wide` for people with room (more
 * columns), `json` and `yaml` for scripts (one document with the proto's
 * field names; a stream gives one JSON object per line, or YAML documents
 * separated by `---`).
 */
import { stringify as toYaml } from 'yaml';
import type { Agent, HealthResponse } from '../agents/agent-service-types.js';
import type { ErrorBody } from '../api/proto.js';
import type { ProtoMessage } from '../api/grpc/grpc-translate.js';
import { formatSize } from '../config/units.js';
import type { FlagSpec } from './command.js';

export const OUTPUT_FORMATS = ['table', 'wide', 'json', 'yaml'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

export const OUTPUT_FLAG = {
  type: 'string',
  short: 'o',
  value: 'FORMAT',
  choices: OUTPUT_FORMATS,
  description: 'Output format (default table; wide adds columns; json and yaml for scripts).',
  group: 'Output',
} as const satisfies FlagSpec;

export function isOutputFormat(value: string): value is OutputFormat {
  return (OUTPUT_FORMATS as readonly string[]).includes(value);
}

/** `-o`'s value; the parser has checked it is one of the formats. */
export function outputFormat(value: string | undefined): OutputFormat {
  return value !== undefined && isOutputFormat(value) ? value : 'table';
}

export function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** One result in the asked form; `wide` falls back to `table` for a command with nothing more to show. */
export function render(format: OutputFormat, value: unknown, forms: { table: () => string; wide?: () => string }): string {
  switch (format) {
    case 'json':
      return json(value);
    case 'yaml':
      return toYaml(value);
    case 'wide':
      return (forms.wide ?? forms.table)();
    case 'table':
      return forms.table();
  }
}

/** One item of a stream: a line of JSON, or a YAML document. */
export function renderStreamed(format: OutputFormat, value: unknown, line: () => string): string {
  if (format === 'json') return `${JSON.stringify(value)}\n`;
  if (format === 'yaml') return `---\n${toYaml(value)}`;
  return line();
}

/** Left-aligned columns separated by two spaces; the header is the first row. */
export function table(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows.map((row) => `${row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  ').trimEnd()}\n`).join('');
}

/** A column of the agents tables: its header and the cell of one agent. */
type AgentColumn = readonly [header: string, cell: (agent: Agent) => string];

const AGENT_COLUMNS: readonly AgentColumn[] = [
  ['AGENT_ID', (a) => a.agent_id],
  ['NAME', (a) => a.name],
  ['STATE', (a) => a.state],
  ['RESTARTS', (a) => String(a.restart_count)],
  ['RECEIVED', (a) => String(a.messages_received)],
  ['SENT', (a) => String(a.messages_sent)],
  ['MEMORY', (a) => formatSize(a.memory_bytes)],
];
const WIDE_COLUMNS: readonly AgentColumn[] = [
  ['MEMORY_LIMIT', (a) => (a.resources.memory_limit === 0 ? '-' : formatSize(a.resources.memory_limit))],
  ['NODE', (a) => a.node_id],
  ['MODULE', (a) => a.module_sha256.slice(0, 12)],
  ['CAPABILITIES', (a) => a.capabilities.join(',') || '-'],
  ['THROTTLED', (a) => `${a.throttled_seconds.toFixed(1)}s`],
];
const CREATED_COLUMN: AgentColumn = ['CREATED', (a) => a.created_at];

function agentColumnsTable(columns: readonly AgentColumn[], agents: readonly Agent[]): string {
  return table([columns.map(([header]) => header), ...agents.map((agent) => columns.map(([, cell]) => cell(agent)))]);
}

export function agentsTable(agents: readonly Agent[]): string {
  return agentColumnsTable([...AGENT_COLUMNS, CREATED_COLUMN], agents);
}

/** The table plus where each agent runs, what it runs and under which limits. */
export function agentsWideTable(agents: readonly Agent[]): string {
  return agentColumnsTable([...AGENT_COLUMNS, ...WIDE_COLUMNS, CREATED_COLUMN], agents);
}

/** One agent as `key  value` lines, in the proto's field order. */
export function agentDetails(agent: Agent): string {
  return table([
    ['agent_id', agent.agent_id],
    ['name', agent.name],
    ['state', agent.state],
    ['capabilities', agent.capabilities.join(', ')],
    ['memory_limit', agent.resources.memory_limit === 0 ? 'server maximum' : formatSize(agent.resources.memory_limit)],
    ['cpu_shares', agent.resources.cpu_shares === 0 ? 'default' : String(agent.resources.cpu_shares)],
    ['node_id', agent.node_id],
    ['module_sha256', agent.module_sha256],
    ['module_size', formatSize(agent.module_size)],
    ['module_version', agent.module_version ? String(agent.module_version) : 'unknown'],
    // proto-loader decodes an unset previous_module as null.
    ['previous_module', agent.previous_module ? `version ${agent.previous_module.version}, sha256 ${agent.previous_module.sha256}` : 'none'],
    ['restart_count', String(agent.restart_count)],
    ['messages_received', String(agent.messages_received)],
    ['messages_sent', String(agent.messages_sent)],
    ['memory_bytes', formatSize(agent.memory_bytes)],
    ['throttled_seconds', agent.throttled_seconds.toFixed(3)],
    ['created_at', agent.created_at],
    ['updated_at', agent.updated_at],
  ]);
}

/** `created_at  sender -> receiver  type  content`, content on the same line whatever it holds. */
export function messageLine(message: ProtoMessage): string {
  return `${message.created_at}  ${message.sender} -> ${message.receiver}  ${message.message_type}  ${JSON.stringify(message.content)}\n`;
}

/** The message line with its ids: which conversation, and what it answers. */
export function messageWideLine(message: ProtoMessage): string {
  const answers = message.in_reply_to === '' ? '' : `  in_reply_to=${message.in_reply_to}`;
  return `${message.created_at}  ${message.message_id}  ${message.sender} -> ${message.receiver}  ${message.message_type}  conversation=${message.conversation_id}${answers}  ${JSON.stringify(message.content)}\n`;
}

export function healthLine(health: HealthResponse): string {
  return `${health.status}  version ${health.version}  agents ${health.agents.running}/${health.agents.capacity}  trace ${health.trace_id}\n`;
}

/** One line for stderr: `svc: CODE: message key=value ... (trace ID)`. */
export function errorLine(error: Pick<ErrorBody, 'code' | 'message' | 'metadata'> & { trace_id?: string }): string {
  const details = Object.entries(error.metadata).map(([k, v]) => ` ${k}=${/\s/.test(v) || v === '' ? JSON.stringify(v) : v}`).join('');
  const trace = error.trace_id ? ` (trace ${error.trace_id})` : '';
  return `svc: ${error.code}: ${error.message.replace(/\s+/g, ' ')}${details}${trace}\n`;
}
