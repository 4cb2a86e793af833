/**
 * The audit log (DESIGN.md section 9): one record per event of
 * `audit_events`, written to SQLite in batches (one transaction, one fsync,
 * per `FLUSH_INTERVAL_MS` or `FLUSH_BATCH` records, so a flood of refused
 * calls cannot turn into a flood of disk syncs), read back newest first,
 * and kept for `audit_retention`. Callers pass identifiers only; the text
 * fields are bounded here so no client can make a record large.
 */
import type { Clock, TimerHandle } from '../../supervisors/index.js';
import type { Logger } from '../telemetry/logger.js';
import type { AuditEvent, AuditQuery, AuditRecord, AuditStore } from './store/audit-store.js';
import type { WallClock } from './wall-clock.js';

export const FLUSH_INTERVAL_MS = 100;
export const FLUSH_BATCH = 256;
/** Records held in memory at most if the disk stalls; past it the oldest unwritten are dropped (and logged). */
export const MAX_PENDING = 10_000;
/** How often records past the retention are removed. */
export const PRUNE_INTERVAL_MS = 3_600_000;
/** Characters kept of a user agent, a resource or a reason. */
export const MAX_FIELD_LENGTH = 256;

export type AuditEntry = Omit<AuditRecord, 'time'>;

export interface AuditLog {
  record(entry: AuditEntry): void;
  /** Newest first; what was recorded before the call is included. */
  query(query: AuditQuery): AuditRecord[];
  flush(): void;
  /** Writes what is pending and stops the timers. */
  close(): void;
}

export interface AuditLogOptions {
  store: AuditStore;
  events: readonly AuditEvent[];
  retentionMs: number;
  clock: Clock;
  wallClock: WallClock;
  /** Also prunes expired refresh-token families on the same schedule. */
  onPrune?: (before: number) => void;
  log?: Logger;
}

const bounded = (text: string): string => (text.length <= MAX_FIELD_LENGTH ? text : text.slice(0, MAX_FIELD_LENGTH));

export function createAuditLog(options: AuditLogOptions): AuditLog {
  const { store, clock, wallClock, log } = options;
  const recorded = new Set(options.events);
  let pending: AuditRecord[] = [];
  let flushTimer: TimerHandle | undefined;
  let pruneTimer: TimerHandle | undefined;
  let closed = false;

  function flush(): void {
    if (flushTimer !== undefined) clock.clearTimeout(flushTimer);
    flushTimer = undefined;
    if (pending.length === 0) return;
    const batch = pending;
    pending = [];
    try {
      store.append(batch);
    } catch (err) {
      log?.error({ err, records: batch.length }, 'audit records could not be written');
      pending = batch.concat(pending).slice(-MAX_PENDING);
    }
  }

  function prune(): void {
    const before = wallClock.now() - options.retentionMs;
    try {
      const removed = store.prune(before);
      options.onPrune?.(wallClock.now());
      if (removed > 0) log?.info({ removed }, 'audit records past the retention removed');
    } catch (err) {
      log?.error({ err }, 'audit records could not be pruned');
    }
    if (!closed) pruneTimer = clock.setTimeout(prune, PRUNE_INTERVAL_MS);
  }
  prune();

  return {
    record(entry) {
      if (closed || !recorded.has(entry.event)) return;
      pending.push({
        ...entry,
        time: wallClock.now(),
        user_agent: bounded(entry.user_agent),
        resource: bounded(entry.resource),
        reason: bounded(entry.reason),
        principal: bounded(entry.principal),
      });
      if (pending.length > MAX_PENDING) {
        pending.shift();
        log?.warn('audit records dropped: the store does not keep up');
      }
      if (pending.length >= FLUSH_BATCH) flush();
      else flushTimer ??= clock.setTimeout(flush, FLUSH_INTERVAL_MS);
    },
    query(query) {
      flush();
      return store.query(query);
    },
    flush,
    close() {
      if (closed) return;
      closed = true;
      flush();
      if (pruneTimer !== undefined) clock.clearTimeout(pruneTimer);
    },
  };
}
