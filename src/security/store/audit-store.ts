/**
 * Audit records at rest (table `audit_log`), in the shape of DESIGN.md
 * section 9. Rows are appended in batches (audit-log.ts) and read newest
 * first.
 */
import type Database from 'better-sqlite3';

export const AUDIT_EVENTS = ['authentication', 'authorization', 'agent_creation', 'agent_deletion', 'configuration_change', 'admin_action'] as const;
export type AuditEvent = (typeof AUDIT_EVENTS)[number];

export type AuditOutcome = 'success' | 'failure';

export interface AuditRecord {
  /** Epoch milliseconds. */
  time: number;
  event: AuditEvent;
  outcome: AuditOutcome;
  principal: string;
  roles: readonly string[];
  source_ip: string;
  user_agent: string;
  operation: string;
  resource: string;
  trace_id: string;
  reason: string;
}

export interface AuditQuery {
  event?: AuditEvent;
  principal?: string;
  /** Epoch milliseconds: records at or after it. */
  since?: number;
  limit: number;
}

export interface AuditStore {
  append(records: readonly AuditRecord[]): void;
  /** Newest first. */
  query(query: AuditQuery): AuditRecord[];
  /** Removes records older than `before`; answers how many. */
  prune(before: number): number;
}

interface AuditRow extends Omit<AuditRecord, 'roles' | 'event' | 'outcome'> {
  event: string;
  outcome: string;
  roles: string;
}

export function createAuditStore(db: Database.Database): AuditStore {
  const insert = db.prepare(`INSERT INTO audit_log (time, event, outcome, principal, roles, source_ip, user_agent, operation, resource, trace_id, reason)
    VALUES (@time, @event, @outcome, @principal, @roles, @source_ip, @user_agent, @operation, @resource, @trace_id, @reason)`);
  const select = db.prepare<{ event: string | null; principal: string | null; since: number | null; limit: number }, AuditRow>(`SELECT
      time, event, outcome, principal, roles, source_ip, user_agent, operation, resource, trace_id, reason FROM audit_log
    WHERE (@event IS NULL OR event = @event) AND (@principal IS NULL OR principal = @principal) AND (@since IS NULL OR time >= @since)
    ORDER BY time DESC, id DESC LIMIT @limit`);
  const prune = db.prepare<[number]>('DELETE FROM audit_log WHERE time < ?');
  const appendAll = db.transaction((records: readonly AuditRecord[]) => {
    for (const record of records) insert.run({ ...record, roles: JSON.stringify(record.roles) });
  });

  return {
    append(records) {
      if (records.length > 0) appendAll.immediate(records);
    },
    query(query) {
      const rows = select.all({ event: query.event ?? null, principal: query.principal ?? null, since: query.since ?? null, limit: query.limit });
      return rows.map((row) => ({ ...row, event: row.event as AuditEvent, outcome: row.outcome as AuditOutcome, roles: JSON.parse(row.roles) as string[] }));
    },
    prune: (before) => prune.run(before).changes,
  };
}
