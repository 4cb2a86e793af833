import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createSimulatedClock } from '../../supervisors/clock-simulated.js';
import { createAgentRegistry, type AgentRegistry, type LocalAgent } from '../../src/cluster/agent-registry.js';
import { supersedes, type RegistryEntry } from '../../src/cluster/registry-entry.js';

const clock = createSimulatedClock();

function registry(nodeId: string): AgentRegistry {
  return createAgentRegistry({ nodeId, clock, retransmitMult: 4, memberCount: () => 3, tombstoneLifetimeMs: 60_000 });
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
});
