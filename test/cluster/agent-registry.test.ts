import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createSimulatedClock } from '../../supervisors/clock-simulated.js';
import { createAgentRegistry, type AgentRegistry, type LocalAgent } from '../../src/cluster/agent-registry.js';
import { supersedes, type RegistryEntry } from '../../src/cluster/registry-entry.js';

const clock = createSimulatedClock();

function registry(nodeId: string, lost: string[] = []): AgentRegistry {
  return createAgentRegistry({ nodeId, clock, retransmitMult: 4, memberCount: () => 3, tombstoneLifetimeMs: 60_000, onLost: (id) => lost.push(id) });
}

function agent(id: string, name = id, state = 'running'): LocalAgent {
  return { agent_id: id, name, state, module_sha256: 'ab', module_size: 10, capabilities: [], created_at: 1 };
}

/** Everything `from` would piggyback, delivered to `to`. */
function gossip(from: AgentRegistry, to: AgentRegistry): void {
  for (const payload of from.delegate.broadcasts!(0, 1 << 20)) to.delegate.onMessage!(payload, 'x');
}

function pushPull(a: AgentRegistry, b: AgentRegistry): void {
  const fromA = a.delegate.localState!(false);
  const fromB = b.delegate.localState!(false);
  b.delegate.mergeRemoteState!(fromA, false);
  a.delegate.mergeRemoteState!(fromB, false);
}

const entry = (over: Partial<RegistryEntry>): RegistryEntry => ({ ...agent('a'), node_id: 'n1', version: 1, deleted: false, ...over });

describe('registry entries merge', () => {
  const cases: Array<[string, RegistryEntry, RegistryEntry | undefined, boolean]> = [
    ['anything beats nothing', entry({}), undefined, true],
    ['a higher version wins', entry({ version: 2 }), entry({ version: 1 }), true],
    ['a lower version loses', entry({ version: 1 }), entry({ version: 2 }), false],
    ['equal versions: the lower node id wins', entry({ node_id: 'n1' }), entry({ node_id: 'n2' }), true],
    ['equal versions: the higher node id loses', entry({ node_id: 'n2' }), entry({ node_id: 'n1' }), false],
    ['same writer and version: a tombstone is final', entry({ deleted: true }), entry({}), true],
    ['same writer and version: no resurrection', entry({}), entry({ deleted: true }), false],
  ];
  for (const [name, incoming, held, expected] of cases) it(name, () => assert.equal(supersedes(incoming, held), expected));
});

describe('agent registry', () => {
  it('spreads a deploy by gossip and an undeploy as a tombstone', () => {
    const [a, b] = [registry('n1'), registry('n2')];
    a.reconcile([agent('x', 'alpha')]);
    gossip(a, b);
    assert.equal(b.get('x')?.node_id, 'n1');
    assert.equal(b.byName('alpha')?.agent_id, 'x');
    a.reconcile([]);
    gossip(a, b);
    assert.equal(b.get('x'), undefined);
    assert.equal(b.byName('alpha'), undefined);
    // A stale copy of the live entry does not bring it back.
    b.delegate.onMessage!(new TextEncoder().encode(JSON.stringify({ entries: [entry({ agent_id: 'x', version: 1 })] })), 'z');
    assert.equal(b.get('x'), undefined);
  });

  it('converges by push-pull, counting agents per node', () => {
    const [a, b] = [registry('n1'), registry('n2')];
    a.reconcile([agent('x'), agent('y')]);
    b.reconcile([agent('z')]);
    pushPull(a, b);
    assert.deepEqual(Object.fromEntries(a.countByNode()), { n1: 2, n2: 1 });
    assert.deepEqual(Object.fromEntries(b.countByNode()), { n1: 2, n2: 1 });
  });

  it('a restarted node writes its entries above the versions the cluster kept', () => {
    const a = registry('n1');
    const b = registry('n2');
    a.reconcile([agent('x', 'x', 'running')]);
    a.reconcile([agent('x', 'x', 'hibernated')]);
    a.reconcile([agent('x', 'x', 'running'), agent('gone')]);
    pushPull(a, b);
    assert.equal(b.get('x')?.version, 3);
    const restarted = registry('n1');
    restarted.reconcile([agent('x', 'x', 'failed')]);
    pushPull(restarted, b);
    // It learns the cluster's versions in the exchange and gossips its entries above them.
    gossip(restarted, b);
    assert.equal(b.get('x')?.state, 'failed');
    assert.ok(b.get('x')!.version > 3);
    // It no longer hosts `gone`: the entry it wrote before the restart is buried.
    assert.equal(b.get('gone'), undefined);
    assert.equal(restarted.get('gone'), undefined);
  });

  it('ignores malformed payloads', () => {
    const a = registry('n1');
    for (const text of ['', 'null', '{"entries":[{"agent_id":""}]}', '{"entries":"x"}', '{"entries":[{"agent_id":"a","node_id":"n","version":1.5}]}']) {
      a.delegate.onMessage!(new TextEncoder().encode(text), 'z');
    }
    assert.deepEqual(a.live(), []);
  });

  it('forgets tombstones after their lifetime', () => {
    const a = registry('n1');
    a.reconcile([agent('x')]);
    a.reconcile([]);
    a.sweep();
    assert.equal(JSON.parse(new TextDecoder().decode(a.delegate.localState!(false))).entries.length, 1);
    clock.increment(60_000);
    a.sweep();
    assert.equal(JSON.parse(new TextDecoder().decode(a.delegate.localState!(false))).entries.length, 0);
  });

  it('a restarted node only listens until its first reconcile, then buries what it no longer runs', () => {
    const a = registry('n1');
    const b = registry('n2');
    a.reconcile([agent('x'), agent('moved')]);
    pushPull(a, b);
    const restarted = registry('n1');
    pushPull(b, restarted);
    assert.equal(restarted.reconciled, false);
    assert.equal(restarted.get('x')?.version, 1, 'kept as the cluster had it, not refuted before the node knows what it runs');
    restarted.reconcile([agent('x')]);
    assert.equal(restarted.reconciled, true);
    assert.equal(restarted.get('moved'), undefined);
    assert.equal(restarted.get('x')?.version, 1, 'unchanged, so not written again');
  });

  it('a failover: the adopting node writes above the dead owner, which lets its copy go when it comes back', () => {
    const lostOnA: string[] = [];
    const a = registry('n1', lostOnA);
    const b = registry('n2');
    a.reconcile([agent('x')]);
    pushPull(a, b);
    b.adopt('x');
    b.reconcile([agent('x')]);
    assert.deepEqual({ node: b.get('x')?.node_id, version: b.get('x')?.version }, { node: 'n2', version: 2 });
    // n1 was cut off, still runs x, and hears of the failover.
    gossip(b, a);
    assert.deepEqual(lostOnA, ['x']);
    assert.equal(a.get('x')?.node_id, 'n2');
    // Its next reconcile, with x not yet stopped, does not write it back.
    a.reconcile([agent('x')]);
    assert.equal(a.get('x')?.node_id, 'n2');
    assert.deepEqual(lostOnA, ['x', 'x']);
    a.reconcile([]);
    pushPull(a, b);
    assert.deepEqual({ node: b.get('x')?.node_id, version: b.get('x')?.version }, { node: 'n2', version: 2 });
  });

  it('two nodes that both adopt the same agent: the lower node id keeps it, the other lets it go', () => {
    const lostOnC: string[] = [];
    const [a, b, c] = [registry('n1'), registry('n2'), registry('n3', lostOnC)];
    a.reconcile([agent('x')]);
    pushPull(a, b);
    pushPull(a, c);
    for (const r of [b, c]) {
      r.adopt('x');
      r.reconcile([agent('x')]);
    }
    pushPull(b, c);
    assert.equal(c.get('x')?.node_id, 'n2');
    assert.deepEqual(lostOnC, ['x']);
  });
});

