import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { createSimulatedClock } from '../../supervisors/clock-simulated.js';
import { createAgentRegistry } from '../../src/cluster/agent-registry.js';
import { createFailover, failoverTarget, type AdoptedAgent, type FailoverHost } from '../../src/cluster/failover.js';
import type { Member, MemberState } from '../../src/cluster/member.js';
import { createNodeClients } from '../../src/cluster/node-clients.js';
import { createReplication } from '../../src/cluster/replication.js';
import { capturedLogger } from '../telemetry/telemetry-fixtures.js';

const module = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]);
const sha = createHash('sha256').update(module).digest('hex');

/** A node's failover over a member table the test sets, with a real registry and replication (its module is local). `silent` members show in the table but do not answer a direct ping. */
function node(nodeId: string, table: Map<string, MemberState>, silent: ReadonlySet<string> = new Set(), stillUp: ReadonlySet<string> = new Set()) {
  const clock = createSimulatedClock();
  const { log, capture } = capturedLogger();
  const registry = createAgentRegistry({ nodeId, clock, retransmitMult: 4, memberCount: () => table.size, tombstoneLifetimeMs: 60_000 });
  const clients = createNodeClients({ nodeId, key: undefined, now: () => clock.now() });
  const replication = createReplication({ nodeId, factor: 2, clients, peers: () => [], store: { getModule: (s) => (s === sha ? module : undefined), replicas: () => [], dropReplica: () => undefined }, clock, log });
  const events: string[] = [];
  const adopted: AdoptedAgent[] = [];
  const host: FailoverHost = {
    async adopt(agent) {
      adopted.push(agent);
      registry.reconcile(adopted.map((a) => ({ agent_id: a.agent_id, name: a.name, state: 'running', module_sha256: sha, module_size: module.byteLength, capabilities: [], created_at: a.created_at })));
    },
    async suspend() {
      events.push('suspend');
    },
    async resume() {
      events.push('resume');
    },
  };
  let failovers = 0;
  const members = (): Member[] => [...table].map(([id, state]) => ({ node_id: id, state, incarnation: 0, address: id, grpc_address: `${id}:1`, http_address: '' }));
  const reach = async (id: string) => (table.get(id) === 'alive' && !silent.has(id)) || stillUp.has(id);
  const failover = createFailover({ nodeId, members, registry, replication, host, clock, reach, sync: reach, minorityGraceMs: () => 1_500, log, failedOver: () => (failovers += 1), localChanged: () => undefined });
  return { clock, registry, failover, events, adopted, capture, failovers: () => failovers, close: () => clients.close() };
}

/** What `from`'s registry holds, as a push-pull gives it to `to`. */
function sync(from: ReturnType<typeof createAgentRegistry>, to: ReturnType<typeof createAgentRegistry>): void {
  to.delegate.mergeRemoteState!(from.delegate.localState!(false), false);
}

describe('failover on one node', () => {
  it('starts the dead node\'s agents it wins, with their ids and names, once, and counts them', async () => {
    const table = new Map<string, MemberState>([['n1', 'alive'], ['n2', 'alive'], ['n3', 'alive']]);
    const dead = createAgentRegistry({ nodeId: 'n3', clock: createSimulatedClock(), retransmitMult: 4, memberCount: () => 3, tombstoneLifetimeMs: 60_000 });
    const ids = Array.from({ length: 12 }, (_, i) => `agent-${i}`);
    dead.reconcile(ids.map((id) => ({ agent_id: id, name: `name-${id}`, state: 'running', module_sha256: sha, module_size: 8, capabilities: [], created_at: 5, replicas: ['n1', 'n2'] })));
    const n1 = node('n1', table);
    try {
      sync(dead, n1.registry);
      n1.registry.reconcile([]);
      n1.failover.check();
      assert.equal(n1.adopted.length, 0, 'nothing while n3 is alive');
      table.set('n3', 'dead');
      n1.failover.check();
      await n1.capture.waitFor((r) => r.msg === 'agent failed over', 'a failover');
      n1.failover.check();
      await new Promise<void>((resolve) => setImmediate(resolve));
      const mine = ids.filter((id) => failoverTarget(n1.registry.held(id) ?? dead.held(id)!, ['n1', 'n2']) === 'n1' || n1.registry.get(id)?.node_id === 'n1');
      assert.ok(mine.length > 0 && mine.length < ids.length, 'the agents spread over the two survivors');
      assert.deepEqual(n1.adopted.map((a) => a.agent_id).sort(), mine.sort());
      assert.ok(n1.adopted.every((a) => a.name === `name-${a.agent_id}`));
      assert.equal(n1.failovers(), mine.length);
      for (const id of mine) assert.deepEqual({ node: n1.registry.get(id)?.node_id, version: n1.registry.get(id)?.version }, { node: 'n1', version: 2 });
    } finally {
      n1.close();
    }
  });

  it('fails over nothing while the majority its table shows does not answer (a side cut off that has not suspected everyone yet)', async () => {
    const table = new Map<string, MemberState>([['n1', 'alive'], ['n2', 'alive'], ['n3', 'alive'], ['n4', 'alive'], ['n5', 'alive']]);
    const dead = createAgentRegistry({ nodeId: 'n5', clock: createSimulatedClock(), retransmitMult: 4, memberCount: () => 5, tombstoneLifetimeMs: 60_000 });
    dead.reconcile([{ agent_id: 'x', name: 'x', state: 'running', module_sha256: sha, module_size: 8, capabilities: [], created_at: 5, replicas: ['n1'] }]);
    const n1 = node('n1', table, new Set(['n3', 'n4']));
    try {
      sync(dead, n1.registry);
      n1.registry.reconcile([]);
      table.set('n5', 'dead');
      n1.failover.check();
      await n1.capture.waitFor((r) => r.msg === 'agents of a dead member not failed over: a majority of the cluster did not answer', 'the refusal');
      assert.equal(n1.adopted.length, 0);
      assert.equal(n1.failovers(), 0);
    } finally {
      n1.close();
    }
  });

  it('fails over nothing of a member declared dead that still answers (a stale death heard as a cut heals)', async () => {
    const table = new Map<string, MemberState>([['n1', 'alive'], ['n2', 'alive'], ['n3', 'alive']]);
    const owner = createAgentRegistry({ nodeId: 'n3', clock: createSimulatedClock(), retransmitMult: 4, memberCount: () => 3, tombstoneLifetimeMs: 60_000 });
    owner.reconcile([{ agent_id: 'x', name: 'x', state: 'running', module_sha256: sha, module_size: 8, capabilities: [], created_at: 5, replicas: ['n1'] }]);
    const n1 = node('n1', table, new Set(), new Set(['n3']));
    try {
      sync(owner, n1.registry);
      n1.registry.reconcile([]);
      table.set('n3', 'dead');
      n1.failover.check();
      await n1.capture.waitFor((r) => r.msg === 'agents of a member declared dead not failed over: it still answers', 'the refusal');
      assert.equal(n1.adopted.length, 0);
    } finally {
      n1.close();
    }
  });

  it('fails over nothing with exactly half, and stops its agents after the suspicion timeout as a minority, then starts them again', async () => {
    const table = new Map<string, MemberState>([['n1', 'alive'], ['n2', 'dead']]);
    const dead = createAgentRegistry({ nodeId: 'n2', clock: createSimulatedClock(), retransmitMult: 4, memberCount: () => 2, tombstoneLifetimeMs: 60_000 });
    dead.reconcile([{ agent_id: 'x', name: 'x', state: 'running', module_sha256: sha, module_size: 8, capabilities: [], created_at: 5 }]);
    const n1 = node('n1', table);
    try {
      sync(dead, n1.registry);
      n1.registry.reconcile([]);
      n1.failover.check();
      assert.equal(n1.failover.verdict, 'half');
      assert.deepEqual(n1.adopted, []);
      assert.deepEqual(n1.events, []);

      table.set('n3', 'dead');
      n1.failover.check();
      assert.equal(n1.failover.verdict, 'minority');
      n1.clock.increment(1_500);
      n1.failover.check();
      assert.deepEqual(n1.events, [], 'not before the suspicion timeout has passed');
      n1.clock.increment(1);
      n1.failover.check();
      n1.failover.check();
      assert.deepEqual(n1.events, ['suspend'], 'once');
      assert.deepEqual(n1.adopted, [], 'a minority fails over nothing');

      table.set('n2', 'alive');
      n1.failover.check();
      assert.equal(n1.failover.verdict, 'majority');
      await n1.capture.waitFor((r) => r.msg === 'this node sees half or more of the cluster again: starting its agents', 'the agents started again, after a majority synced');
      assert.deepEqual(n1.events, ['suspend', 'resume']);
    } finally {
      n1.close();
    }
  });
});
