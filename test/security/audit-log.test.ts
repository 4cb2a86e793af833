import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createAuditLog, FLUSH_BATCH, FLUSH_INTERVAL_MS, MAX_FIELD_LENGTH, PRUNE_INTERVAL_MS, type AuditEntry } from '../../src/security/audit-log.js';
import { createAuditStore } from '../../src/security/store/audit-store.js';
import { DAY, EPOCH, securityDb, type SecurityDb } from './security-fixtures.js';

let fx: SecurityDb;
before(() => {
  fx = securityDb();
});
after(() => fx.close());

const entry = (over: Partial<AuditEntry> = {}): AuditEntry => ({
  event: 'authentication',
  outcome: 'failure',
  principal: '',
  roles: [],
  source_ip: '127.0.0.1',
  user_agent: 'test',
  operation: 'ListAgents',
  resource: '',
  trace_id: '0af7651916cd43dd8448eb211c80319c',
  reason: 'wrong_secret',
  ...over,
});

const rows = (): number => fx.db.prepare('SELECT count(*) AS n FROM audit_log').pluck().get() as number;

test('records are written in batches: on the flush interval, or once a batch is full; a query sees everything recorded', () => {
  const log = createAuditLog({ store: createAuditStore(fx.db), events: ['authentication', 'admin_action'], retentionMs: 90 * DAY, clock: fx.clock, wallClock: fx.wall });
  const before = rows();
  log.record(entry());
  assert.equal(rows(), before, 'not yet on disk');
  fx.clock.increment(FLUSH_INTERVAL_MS);
  assert.equal(rows(), before + 1);
  for (let i = 0; i < FLUSH_BATCH; i++) log.record(entry({ reason: `r${i}` }));
  assert.equal(rows(), before + 1 + FLUSH_BATCH, 'a full batch goes at once');
  log.record(entry({ reason: 'last' }));
  assert.equal(log.query({ limit: 1 })[0]?.reason, 'last', 'the query flushes first, and reads newest first');
  log.close();
});

test('only the configured events are kept; long text is cut', () => {
  const log = createAuditLog({ store: createAuditStore(fx.db), events: ['admin_action'], retentionMs: 90 * DAY, clock: fx.clock, wallClock: fx.wall });
  log.record(entry({ event: 'authorization', reason: 'not-kept' }));
  log.record(entry({ event: 'admin_action', user_agent: 'x'.repeat(10_000), resource: 'key:abc' }));
  const [newest] = log.query({ limit: 5, event: 'admin_action' });
  assert.equal(newest?.user_agent.length, MAX_FIELD_LENGTH);
  assert.equal(log.query({ limit: 1000 }).some((r) => r.reason === 'not-kept'), false);
  log.close();
});

test('filters: event, principal, since; limit', () => {
  const log = createAuditLog({ store: createAuditStore(fx.db), events: ['authentication', 'agent_creation'], retentionMs: 90 * DAY, clock: fx.clock, wallClock: fx.wall });
  const start = fx.wall.now();
  log.record(entry({ event: 'agent_creation', outcome: 'success', principal: 'key:one', roles: ['operator'], resource: 'agent-1' }));
  fx.clock.increment(1_000);
  log.record(entry({ event: 'agent_creation', outcome: 'success', principal: 'key:two', resource: 'agent-2' }));
  assert.deepEqual(log.query({ limit: 10, event: 'agent_creation', principal: 'key:one' }).map((r) => [r.resource, r.roles]), [['agent-1', ['operator']]]);
  assert.deepEqual(log.query({ limit: 10, event: 'agent_creation', since: start + 500 }).map((r) => r.resource), ['agent-2']);
  assert.equal(log.query({ limit: 1, event: 'agent_creation' }).length, 1);
  log.close();
});

test('records past the retention are removed at start and then every prune interval', () => {
  const store = createAuditStore(fx.db);
  store.append([{ ...entry({ reason: 'ancient' }), time: EPOCH - 100 * DAY }]);
  let pruned = 0;
  const log = createAuditLog({ store, events: ['authentication'], retentionMs: 90 * DAY, clock: fx.clock, wallClock: fx.wall, onPrune: () => void pruned++ });
  assert.equal(log.query({ limit: 1000 }).some((r) => r.reason === 'ancient'), false);
  log.record(entry({ reason: 'recent' }));
  log.flush();
  fx.clock.increment(90 * DAY - PRUNE_INTERVAL_MS);
  assert.equal(log.query({ limit: 1000 }).some((r) => r.reason === 'recent'), true, 'kept through the retention');
  const before = pruned;
  fx.clock.increment(2 * PRUNE_INTERVAL_MS);
  assert.ok(pruned > before);
  assert.equal(log.query({ limit: 1000 }).some((r) => r.reason === 'recent'), false, 'kept no longer than the retention');
  log.close();
});
