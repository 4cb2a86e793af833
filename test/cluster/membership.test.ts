import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { createBroadcastQueue } from '../../src/cluster/broadcast-queue.js';
import { ClusterSettingsError } from '../../src/cluster/cluster-settings.js';
import { createEnvelope } from '../../src/cluster/gossip-cipher.js';
import { createMembership } from '../../src/cluster/membership.js';
import type { MembershipDelegate } from '../../src/cluster/membership-delegate.js';
import { createSimCluster, DEFAULT_SWIM, simAddress } from '../../src/cluster/simulation.js';

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
const bytes = (value: string) => new TextEncoder().encode(value);

describe('membership', () => {
  it('joins through a seed: members, counts and change events name every node and its addresses', async () => {
    const sim = createSimCluster({ seed: 1 });
    await sim.start('a');
    await sim.start('b', [simAddress('a')]);
    await sim.start('c', [simAddress('b')]);
    assert.ok(await sim.until(() => sim.allSee(['a', 'b', 'c'], 'alive'), 5_000));
    const a = sim.nodes.get('a')!.membership;
    assert.deepEqual(a.members(), ['a', 'b', 'c'].map((id) => ({ node_id: id, address: simAddress(id), grpc_address: `${id}.sim:50051`, http_address: `${id}.sim:8080`, state: 'alive', incarnation: 0 })));
    assert.deepEqual(a.counts(), { alive: 3, suspect: 0, dead: 0, left: 0 });
    const joins = sim.changes.filter((c) => c.observer === 'a').map((c) => [c.node_id, c.from, c.to, c.reason]);
    assert.deepEqual(joins, [
      ['b', 'none', 'alive', 'joined'],
      ['c', 'none', 'alive', 'joined'],
    ]);
    assert.equal(a.healthScore(), 0);
    await sim.stopAll();
  });

  it('a join reports the seeds it could not reach', async () => {
    const sim = createSimCluster({ seed: 2 });
    await sim.start('a');
    const b = (await sim.start('b')).membership;
    const joining = b.join([simAddress('a'), simAddress('nobody'), simAddress('b')]);
    await sim.run(100);
    const result = await joining;
    assert.deepEqual(result.contacted, [simAddress('a')]);
    assert.equal(result.failed.length, 1);
    assert.equal(result.failed[0]?.address, simAddress('nobody'));
    assert.match(result.failed[0]!.error, /refused/);
    await sim.stopAll();
  });

  it('a graceful leave is seen as left, not dead, with reason left', async () => {
    const sim = createSimCluster({ seed: 3 });
    await sim.start('a');
    await sim.start('b', [simAddress('a')]);
    await sim.start('c', [simAddress('a')]);
    await sim.until(() => sim.allSee(['a', 'b', 'c'], 'alive'), 5_000);
    let left = false;
    void sim.nodes.get('c')!.membership.leave().then(() => (left = true));
    assert.ok(await sim.until(() => left, 2_000, 10), 'the leave is gossiped out before its timeout');
    await sim.crash('c');
    assert.ok(sim.allSee(['c'], 'left'));
    await sim.run(30_000);
    assert.ok(sim.allSee(['c'], 'left'), 'a departed node is not probed, so never suspected');
    const seen = sim.changes.filter((ch) => ch.node_id === 'c' && ch.observer === 'a' && ch.to !== 'alive');
    assert.deepEqual(seen.map((ch) => [ch.from, ch.to, ch.reason, ch.by]), [['alive', 'left', 'left', 'c']]);
    await sim.stopAll();
  });

  it('forgets the dead after reconnect_timeout', async () => {
    const sim = createSimCluster({ seed: 4, settings: { reconnect_timeout: 20_000 } });
    await sim.start('a');
    await sim.start('b', [simAddress('a')]);
    await sim.until(() => sim.allSee(['a', 'b'], 'alive'), 5_000);
    await sim.crash('b');
    assert.ok(await sim.until(() => sim.view('a').get('b') === 'dead', 10_000));
    assert.ok(await sim.until(() => !sim.view('a').has('b'), 40_000));
    const last = sim.changes.filter((c) => c.node_id === 'b' && c.observer === 'a').at(-1);
    assert.deepEqual([last?.from, last?.to, last?.reason], ['dead', 'none', 'forgotten']);
    await sim.stopAll();
  });

  it('carries the delegate: piggybacked broadcasts, direct messages and push-pull state', async () => {
    const received = new Map<string, string[]>();
    const merged = new Map<string, Array<[string, boolean]>>();
    const delegateFor = (id: string): MembershipDelegate & { queue: ReturnType<typeof createBroadcastQueue> } => {
      const queue = createBroadcastQueue({ retransmitMult: 4, memberCount: () => 3 });
      received.set(id, []);
      merged.set(id, []);
      return {
        queue,
        broadcasts: (overhead, limit) => queue.take(limit, overhead),
        onMessage: (payload, from) => received.get(id)!.push(`${from}: ${text(payload)}`),
        localState: (join) => bytes(`${id} state${join ? ' (join)' : ''}`),
        mergeRemoteState: (state, join) => merged.get(id)!.push([text(state), join]),
      };
    };
    const sim = createSimCluster({ seed: 5, settings: { push_pull_interval: 5_000 } });
    const delegates = { a: delegateFor('a'), b: delegateFor('b'), c: delegateFor('c') };
    await sim.start('a', [], delegates.a);
    await sim.start('b', [simAddress('a')], delegates.b);
    await sim.start('c', [simAddress('a')], delegates.c);
    await sim.until(() => sim.allSee(['a', 'b', 'c'], 'alive'), 5_000);
    assert.deepEqual(merged.get('a')?.slice(0, 2), [['b state (join)', true], ['c state (join)', true]]);
    assert.deepEqual(merged.get('b')?.[0], ['a state (join)', true], 'the answer to a join is a join too');

    delegates.a.queue.push('agent-1', bytes('agent-1 on a, v1'));
    await sim.run(2_000);
    // Gossip may deliver a broadcast more than once; the layer above versions its entries.
    assert.deepEqual(new Set(received.get('b')), new Set(['a: agent-1 on a, v1']));
    assert.deepEqual(new Set(received.get('c')), new Set(['a: agent-1 on a, v1']));

    const b = sim.nodes.get('b')!.membership;
    const sent = b.send('c', bytes('reliable'));
    await sim.run(10);
    await sent;
    b.sendBestEffort('a', bytes('best effort'));
    await sim.run(10);
    assert.deepEqual(received.get('c')?.at(-1), 'b: reliable');
    assert.deepEqual(received.get('a')?.at(-1), 'b: best effort');
    await assert.rejects(b.send('nobody', bytes('x')), /unknown member nobody/);
    assert.throws(() => b.sendBestEffort('a', new Uint8Array(2_000)), RangeError);
    const large = b.send('a', new Uint8Array(200_000).fill(1));
    await sim.run(10);
    await large;
    assert.equal(received.get('a')?.at(-1)?.length, 'b: '.length + 200_000, 'a stream carries what a packet cannot');

    await sim.run(12_000);
    assert.ok(merged.get('c')!.some(([, join]) => !join), 'periodic push-pulls carry the state too');
    await sim.stopAll();
  });

  it('with a secret, only nodes holding the same key form a cluster; the others are counted as rejected', async () => {
    const key = randomBytes(32);
    const sim = createSimCluster({ seed: 6, secretKey: key });
    await sim.start('a');
    await sim.start('b', [simAddress('a')]);
    await sim.until(() => sim.allSee(['a', 'b'], 'alive'), 5_000);
    const intruder = createMembership({ nodeId: 'x', transport: sim.network.attach(simAddress('x')), settings: DEFAULT_SWIM, secretKey: randomBytes(32), clock: sim.clock, random: sim.random, loopDelay: { takeMaxDelayMs: () => 0, close() {} } });
    intruder.start();
    const joining = intruder.join([simAddress('a')]);
    await sim.run(100);
    const result = await joining;
    assert.deepEqual(result.contacted, []);
    const a = sim.nodes.get('a')!.membership;
    assert.ok(a.stats().rejected >= 1);
    assert.equal(a.member('x'), undefined);
    assert.equal(intruder.member('a'), undefined);

    const raw = sim.network.attach('raw:1');
    raw.sendPacket(simAddress('a'), createEnvelope(key).seal(new Uint8Array([0xff, 0xff, 0xff]), 'packet'));
    raw.sendPacket(simAddress('a'), createEnvelope().seal(new Uint8Array([1, 2, 3]), 'packet'));
    await sim.run(10);
    assert.equal(a.stats().malformed, 1, 'authentic but not a packet');
    assert.ok(a.stats().rejected >= 2, 'plain text where a secret is set');
    assert.deepEqual(a.counts(), { alive: 2, suspect: 0, dead: 0, left: 0 });
    await raw.close();
    await intruder.stop();
    await sim.stopAll();
  });

  it('a node restarted at another address takes its place with a higher incarnation', async () => {
    const sim = createSimCluster({ seed: 7 });
    await sim.start('a');
    await sim.start('b', [simAddress('a')]);
    await sim.until(() => sim.allSee(['a', 'b'], 'alive'), 5_000);
    await sim.crash('b');
    const moved = createMembership({ nodeId: 'b', transport: sim.network.attach('b-new.sim:7946'), settings: DEFAULT_SWIM, clock: sim.clock, random: sim.random, loopDelay: { takeMaxDelayMs: () => 0, close() {} } });
    moved.start();
    void moved.join([simAddress('a')]);
    assert.ok(await sim.until(() => sim.nodes.get('a')!.membership.member('b')?.address === 'b-new.sim:7946', 2_000));
    const a = sim.nodes.get('a')!.membership;
    assert.equal(a.member('b')?.state, 'alive');
    assert.ok(a.member('b')!.incarnation >= 1);
    assert.ok(sim.changes.some((c) => c.observer === 'a' && c.node_id === 'b' && c.reason === 'address_changed'));
    await moved.stop();
    await sim.stopAll();
  });

  it('refuses to join or leave before it starts, and to start again once stopped', async () => {
    const sim = createSimCluster({ seed: 9 });
    const idle = createMembership({ nodeId: 'idle', transport: sim.network.attach('idle:1'), settings: DEFAULT_SWIM, clock: sim.clock, loopDelay: { takeMaxDelayMs: () => 0, close() {} } });
    await assert.rejects(idle.join(['a:1']), /join needs a started/);
    await assert.rejects(idle.leave(), /leave needs a started/);
    idle.start();
    await idle.stop();
    assert.throws(() => idle.start(), /stopped/);
    await assert.rejects(idle.join(['a:1']), /join needs a started, not stopped/);
  });

  it('refuses settings it cannot run with, naming the key', () => {
    const sim = createSimCluster({ seed: 8 });
    const make = (settings: Partial<typeof DEFAULT_SWIM>) => () =>
      createMembership({ nodeId: 'a', transport: sim.network.attach(`a${Math.random()}:1`), settings: { ...DEFAULT_SWIM, ...settings }, clock: sim.clock, loopDelay: { takeMaxDelayMs: () => 0, close() {} } });
    assert.throws(make({ probe_timeout: 500 }), (err: unknown) => err instanceof ClusterSettingsError && err.key === 'cluster.probe_timeout');
    assert.throws(make({ gossip_nodes: 0 }), (err: unknown) => err instanceof ClusterSettingsError && err.key === 'cluster.gossip_nodes');
    assert.throws(make({ indirect_checks: -1 }), (err: unknown) => err instanceof ClusterSettingsError && err.key === 'cluster.indirect_checks');
    assert.throws(make({ probe_interval: Number.NaN }), (err: unknown) => err instanceof ClusterSettingsError && err.key === 'cluster.probe_interval');
  });
});
