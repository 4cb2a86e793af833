/**
 * `svc audit`: the server's audit records, newest first. `--since` takes an
 * RFC 3339 time or a duration back from now (`1h`).
 */
import { parseDuration } from '../../config/units.js';
import type { AuditRecordJson } from '../../security/security-service-types.js';
import { defineCommand, UsageError } from '../command.js';
import { CONNECTION_FLAGS } from '../connection.js';
import { EXIT } from '../exit-codes.js';
import { OUTPUT_FLAG, render, table } from '../output.js';
import { CALL_TIMEOUT_MS, withRemote } from '../remote.js';

const EVENTS = ['authentication', 'authorization', 'agent_creation', 'agent_deletion', 'configuration_change', 'admin_action'];

function sinceTime(value: string | undefined, now: number): string {
  if (value === undefined) return '';
  if (/^\d{4}-\d\d-\d\dT/.test(value)) return value;
  const back = parseDuration(value);
  if (back === undefined) throw new UsageError(`--since takes an RFC 3339 time or a duration (1h, 30m), got '${value}'`);
  return new Date(now - back).toISOString();
}

function auditTable(records: readonly AuditRecordJson[], wide: boolean): string {
  const cell = (text: string): string => (text === '' ? '-' : text);
  const header = ['TIME', 'EVENT', 'OUTCOME', 'PRINCIPAL', 'OPERATION', 'RESOURCE', 'SOURCE', 'REASON'];
  const row = (r: AuditRecordJson): string[] => [r.time, r.event, r.outcome, cell(r.principal), r.operation, cell(r.resource), r.source_ip, cell(r.reason)];
  if (!wide) return table([header, ...records.map(row)]);
  return table([[...header, 'ROLES', 'USER_AGENT', 'TRACE_ID'], ...records.map((r) => [...row(r), r.roles.join(',') || '-', cell(r.user_agent), r.trace_id])]);
}

export const auditCommand = defineCommand({
  path: ['audit'],
  summary: 'Show the audit records, newest first.',
  description: `Authentication failures and credential exchanges, authorization denials, deploys and undeploys,
key changes and lockdown switches, each with who, from where and why. Needs audit:view.`,
  args: [],
  flags: {
    event: { type: 'string', short: 'e', value: 'EVENT', choices: EVENTS, description: 'Only this event.' },
    principal: { type: 'string', short: 'p', value: 'PRINCIPAL', description: 'Only the records of this principal (key:<key_id>, cert:<CN>, a token subject).' },
    since: { type: 'string', value: 'TIME', description: 'Only records from then on: an RFC 3339 time, or a duration back from now (1h, 30m).' },
    limit: { type: 'string', short: 'l', value: 'N', description: 'At most N records (default 100, at most 1000).' },
    output: OUTPUT_FLAG,
    ...CONNECTION_FLAGS,
  },
  examples: [
    { description: 'Failed logins and refused keys of the last hour', command: 'svc audit -e authentication --since 1h' },
    { description: 'What one key did', command: 'svc audit -p key:q3vzx7ad2kfl4mno -o json' },
  ],
  async run({ values, io }) {
    const limit = values.limit === undefined ? 0 : Number(values.limit);
    if (!Number.isInteger(limit) || limit < 0) throw new UsageError(`--limit takes a whole number, got '${values.limit}'`);
    const since = sinceTime(values.since, Date.now());
    return withRemote(values, io, async ({ grpc, output }) => {
      const { records } = await grpc().listAudit({ event: values.event ?? '', principal: values.principal ?? '', since, limit }, { timeoutMs: CALL_TIMEOUT_MS });
      io.out(render(output, { records }, { table: () => auditTable(records, false), wide: () => auditTable(records, true) }));
      return EXIT.ok;
    });
  },
});
