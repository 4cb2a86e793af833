import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import type { ClusterSettings } from '../../src/cluster/cluster-settings.js';
import { openClusterNode } from '../../src/cluster/cluster-node.js';
import type { Membership } from '../../src/cluster/membership.js';
import { DEFAULT_SWIM } from '../../src/cluster/simulation.js';

const secret = randomBytes(32).toString('base64');
const settings = (overrides: Partial<ClusterSettings> = {}): ClusterSettings => ({ ...DEFAULT_SWIM, addr: '127.0.0.1:0', advertise_addr: '', seeds: [], node_id: '', secret, ...overrides });

/** Resolves once `done()` holds, checked at each membership change; rejects after `timeoutMs` of real time. */
function until(nodes: readonly Membership[], done: () => boolean, timeoutMs: number, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const offs: Array<() => void> = [];
    const finish = (outcome: () => void) => {
      clearTimeout(timer);
      for (const off of offs) off();
      outcome();
    };
    const timer = setTimeout(() => finish(() => reject(new Error(`not within ${timeoutMs} ms: ${what}`))), timeoutMs);
    const check = () => {
      if (done()) finish(resolve);
    };
    for (const node of nodes) offs.push(node.onChange(check));
    check();
  });
}

const sees = (node: Membership, id: string, state: string) => node.member(id)?.state === state;

describe('three nodes on loopback (UDP and TCP, encrypted)', () => {
  it('join, detect a stopped node, and see a leave', async () => {
    const nodes = await Promise.all(['a', 'b', 'c', 'd'].map((id) => openClusterNode(settings(), { nodeId: id, grpcAddress: `127.0.0.1:${id.charCodeAt(0)}`, httpAddress: '' })));
    const [a, b, c, d] = nodes as [Membership, Membership, Membership, Membership];
    try {
      const results = await Promise.all([b.join([a.address]), c.join([a.address]), d.join([b.address])]);
      assert.deepEqual(results.map((r) => r.contacted.length), [1, 1, 1]);
      await until(nodes, () => nodes.every((n) => n.counts().alive === 4), 10_000, 'all four see each other alive');
      assert.deepEqual(a.member('c'), { node_id: 'c', address: c.address, grpc_address: '127.0.0.1:99', http_address: '', state: 'alive', incarnation: 0 });

      const stoppedAt = performance.now();
      await c.stop();
      await until([a, b, d], () => [a, b, d].every((n) => sees(n, 'c', 'dead')), 20_000, 'the stopped node is declared dead everywhere');
      const detection = performance.now() - stoppedAt;
      assert.ok(detection > 0);

      await d.leave();
      await until([a, b], () => sees(a, 'd', 'left') && sees(b, 'd', 'left'), 10_000, 'the leave is seen');
      assert.deepEqual(a.counts(), { alive: 2, suspect: 0, dead: 1, left: 1 });
      assert.equal(a.stats().rejected, 0);
    } finally {
      for (const node of nodes) await node.stop();
    }
  });

  it('a node with another key is refused and counted, never joins', async () => {
    const a = await openClusterNode(settings(), { nodeId: 'a' });
    const stranger = await openClusterNode(settings({ secret: randomBytes(32).toString('base64') }), { nodeId: 'stranger' });
    try {
      const result = await stranger.join([a.address]);
      assert.deepEqual(result.contacted, []);
      assert.equal(result.failed.length, 1);
      assert.ok(a.stats().rejected >= 1, 'the push-pull frame failed authentication');
      assert.equal(a.member('stranger'), undefined);
      assert.deepEqual(a.counts(), { alive: 1, suspect: 0, dead: 0, left: 0 });
    } finally {
      await a.stop();
      await stranger.stop();
    }
  });
});
