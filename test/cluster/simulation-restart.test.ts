import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createEnvelope } from '../../src/cluster/gossip-cipher.js';
import { encodeMessage, encodePacket } from '../../src/cluster/gossip-codec.js';
import { createSimCluster, simAddress, type SimCluster } from '../../src/cluster/simulation.js';

async function converged(seed: number, count: number): Promise<{ sim: SimCluster; ids: string[] }> {
  const sim = createSimCluster({ seed });
  const ids = Array.from({ length: count }, (_, i) => `n${i}`);
  await sim.start('n0');
  for (const id of ids.slice(1)) await sim.start(id, [simAddress('n0')]);
  assert.ok(await sim.until(() => sim.allSee(ids, 'alive'), 10_000), 'the cluster forms');
  return { sim, ids };
}

describe('restarts', () => {
  it('a stale alive, replayed after a node died, does not bring it back', async () => {
    const { sim, ids } = await converged(21, 8);
    await sim.crash('n7');
    assert.ok(await sim.until(() => sim.allSee(['n7'], 'dead'), 10_000));
    // What n7 said of itself before it died, replayed to every survivor.
    const replayer = sim.network.attach('replayer.sim:1');
    const stale = createEnvelope().seal(encodePacket([encodeMessage({ kind: 'alive', node_id: 'n7', incarnation: 0, address: simAddress('n7'), grpc_address: '', http_address: '' })]), 'packet');
    for (let round = 0; round < 10; round++) {
      for (const id of ids.slice(0, 7)) replayer.sendPacket(simAddress(id), stale);
      await sim.run(1_000);
    }
    assert.ok(sim.allSee(['n7'], 'dead'));
    assert.ok(!sim.changes.some((c) => c.node_id === 'n7' && c.to === 'alive' && c.from === 'dead'));
    await replayer.close();
    await sim.stopAll();
  });

  it('after a mass restart, nodes that restarted at incarnation 0 are not stuck dead', async () => {
    const { sim, ids } = await converged(22, 8);
    const restarted = ['n1', 'n2', 'n3', 'n4'];
    for (const id of restarted) await sim.crash(id);
    const survivors = ids.filter((id) => !restarted.includes(id));
    // Four of eight at once: the survivors' indirect probes go partly to the dead, so Lifeguard slows them down (no nacks come back).
    assert.ok(await sim.until(() => sim.allSee(restarted, 'dead'), 60_000), 'the survivors declare them dead');
    // Back at once, each joining only through another restarted node, which knows nothing of the deaths.
    await sim.start('n1');
    await sim.start('n2', [simAddress('n1')]);
    await sim.start('n3', [simAddress('n2')]);
    await sim.start('n4', [simAddress('n3'), simAddress('n0')]);
    // Faster than any reconnect round or periodic push-pull: the survivors answer the stale alive with the accusation, which is refuted.
    const took = await sim.until(() => sim.allSee(ids, 'alive'), sim.settings.reconnect_interval / 2);
    assert.ok(took !== undefined, 'every node sees every other alive within half a reconnect interval');
    for (const id of restarted) assert.ok(sim.nodes.get(id)!.membership.member(id)!.incarnation >= 1, `${id} refuted its death`);
    void survivors;
    await sim.stopAll();
  });

  it('a node restarted at incarnation 0 hears the death others hold of it, and refutes it (memberlist PR #345)', async () => {
    // No periodic push-pull or reconnect round within the test: only gossip can carry the accusation back.
    const sim = createSimCluster({ seed: 23, settings: { push_pull_interval: 600_000, reconnect_interval: 600_000 } });
    const ids = ['n0', 'n1', 'n2', 'n3', 'n4', 'n5'];
    await sim.start('n0');
    for (const id of ids.slice(1)) await sim.start(id, [simAddress('n0')]);
    assert.ok(await sim.until(() => sim.allSee(ids, 'alive'), 10_000));
    await sim.crash('n1');
    assert.ok(await sim.until(() => sim.allSee(['n1'], 'dead'), 10_000));
    await sim.run(20_000);
    // A newcomer joins, and the restarted n1 joins through it alone: nobody it exchanged state with holds its death.
    await sim.start('n9', [simAddress('n0')]);
    await sim.run(2_000);
    await sim.start('n1', [simAddress('n9')]);
    const took = await sim.until(() => sim.allSee([...ids, 'n9'], 'alive'), 5_000);
    assert.ok(took !== undefined, 'the survivors answer its stale alive with its death; it refutes; all see it alive');
    await sim.stopAll();
  });
});
