import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { failoverTarget } from '../../src/cluster/failover.js';
import type { RegistryEntry } from '../../src/cluster/registry-entry.js';
import { rendezvousRank, rendezvousWinner } from '../../src/cluster/rendezvous.js';

const nodes = ['n1', 'n2', 'n3', 'n4', 'n5'];
const entry = (agentId: string, replicas?: string[]): RegistryEntry => ({
  agent_id: agentId,
  node_id: 'dead',
  name: agentId,
  state: 'running',
  module_sha256: 'ab',
  module_size: 1,
  capabilities: [],
  created_at: 1,
  version: 3,
  deleted: false,
  ...(replicas === undefined ? {} : { replicas }),
});

describe('rendezvous hashing', () => {
  it('every order of the candidates gives the same winner and rank', () => {
    const rank = rendezvousRank('agent-1', nodes);
    assert.deepEqual(rendezvousRank('agent-1', [...nodes].reverse()), rank);
    assert.equal(rendezvousWinner('agent-1', ['n3', 'n1', 'n5', 'n2', 'n4']), rank[0]);
    assert.deepEqual([...rank].sort(), nodes);
  });

  it('a candidate that goes away moves only the keys it won', () => {
    const keys = Array.from({ length: 200 }, (_, i) => `agent-${i}`);
    const before = new Map(keys.map((k) => [k, rendezvousWinner(k, nodes)]));
    const after = new Map(keys.map((k) => [k, rendezvousWinner(k, nodes.filter((n) => n !== 'n2'))]));
    for (const key of keys) if (before.get(key) !== 'n2') assert.equal(after.get(key), before.get(key), key);
    const won = keys.filter((k) => before.get(k) === 'n2').length;
    assert.ok(won > 10 && won < 80, `n2 won ${won} of 200: the keys spread`);
  });

  it('no candidate, no winner', () => assert.equal(rendezvousWinner('x', []), undefined));
});

describe('the failover target of a dead node\'s agent', () => {
  it('is among the alive members that hold its module', () => {
    const target = failoverTarget(entry('a1', ['n2', 'n4', 'dead']), nodes);
    assert.equal(target, rendezvousWinner('a1', ['n2', 'n4']));
  });

  it('is any alive member when no holder is alive (it fetches the module)', () => {
    assert.equal(failoverTarget(entry('a1', ['gone']), ['n1', 'n3']), rendezvousWinner('a1', ['n1', 'n3']));
    assert.equal(failoverTarget(entry('a1'), ['n1', 'n3']), rendezvousWinner('a1', ['n1', 'n3']));
  });

  it('is nobody when nobody is alive', () => assert.equal(failoverTarget(entry('a1', ['n1']), []), undefined));
});
