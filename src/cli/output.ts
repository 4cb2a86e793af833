/**
 * What the remote commands print: `--output table` for people (aligned
 * columns, one line per message), `--output json` for scripts (one JSON
 * document, or one JSON object per line for a stream).
 */
import type { Agent, HealthResponse } from '../agents/agent-service-types.js';
import type { ErrorBody } from '../api/proto.js';
import type { ProtoMessage } from '../api/grpc/grpc-translate.js';
import { formatSize } from '../config/units.js';

export const OUTPUT_FORMATS = ['table', 'json'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

export function isOutputFormat(value: string): value is OutputFormat {
  return (OUTPUT_FORMATS as readonly string[]).includes(value);
}

export function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** Left-aligned columns separated by two spaces; the header is the first row. */
export function table(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows.map((row) => `${row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  ').trimEnd()}\n`).join('');
}

export function agentsTable(agents: readonly Agent[]): string {
  const header = ['AGENT_ID', 'NAME', 'STATE', 'RESTARTS', 'RECEIVED', 'SENT', 'MEMORY', 'CREATED'];
  return table([
    header,
    ...agents.map((a) => [
      a.agent_id,
      a.name,
      a.state,
      String(a.restart_count),
      String(a.messages_received),
      String(a.messages_sent),
      formatSize(a.memory_bytes),
      a.created_at,
    ]),
  ]);
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
    ['restart_count', String(agent.restart_count)],
    ['messages_received', String(agent.messages_received)],
    ['messages_sent', String(agent.messages_sent)],
    ['memory_bytes', formatSize(agent.memory_bytes)],
    ['created_at', agent.created_at],
    ['updated_at', agent.updated_at],
  ]);
}

/** `created_at  sender -> receiver  type  content`, content on the same line whatever it holds. */
export function messageLine(message: ProtoMessage): string {
  return `${message.created_at}  ${message.sender} -> ${message.receiver}  ${message.message_type}  ${JSON.stringify(message.content)}\n`;
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
