import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createSimCluster, falseDeaths, simAddress, type SimCluster } from '../../src/cluster/simulation.js';

async function converged(seed: number, count: number): Promise<{ sim: SimCluster; ids: string[] }> {
  const sim = createSimCluster({ seed });
  const ids = Array.from({ length: count }, (_, i) => `n${i}`);
  await sim.start('n0');
  for (const id of ids.slice(1)) await sim.start(id, [simAddress('n0')]);
  assert.ok(await sim.until(() => sim.allSee(ids, 'alive'), 10_000), 'the cluster forms');
  return { sim, ids };
}

describe('simulated faults', () => {
  it('with 10% packet loss on every link for 5 minutes, no node is declared dead', async () => {
    const { sim, ids } = await converged(11, 30);
    sim.network.setDefaults({ loss: 0.1, delayMs: 1, jitterMs: 4 });
    await sim.run(300_000);
    assert.deepEqual(falseDeaths(sim).map((c) => `${c.observer} saw ${c.node_id} ${c.reason}`), []);
    assert.ok(sim.allSee(ids, 'alive'));
    assert.ok(sim.changes.some((c) => c.to === 'suspect'), 'the loss did cause suspicions, which were refuted');
    await sim.stopAll();
  });

  it('in a non-transitive cut (A↔C cut, both reach B) nobody is declared dead', async () => {
    const { sim, ids } = await converged(12, 3);
    sim.network.cut(simAddress('n0'), simAddress('n2'));
    sim.network.cut(simAddress('n2'), simAddress('n0'));
    await sim.run(120_000);
    assert.deepEqual(falseDeaths(sim), []);
    assert.ok(sim.allSee(ids, 'alive'), 'the indirect probes through B vouch for A and C');
    await sim.stopAll();
  });

  it('with a one-way cut (A cannot reach C, C reaches A) nobody is declared dead', async () => {
    const { sim, ids } = await converged(13, 4);
    sim.network.cut(simAddress('n0'), simAddress('n2'));
    await sim.run(120_000);
    assert.deepEqual(falseDeaths(sim), []);
    assert.ok(sim.allSee(ids, 'alive'));
    await sim.stopAll();
  });

  it('a crashed node is declared dead everywhere, and only it', async () => {
    const { sim, ids } = await converged(14, 10);
    await sim.crash('n5');
    const took = await sim.until(() => sim.allSee(['n5'], 'dead'), 6_000, 50);
    assert.ok(took !== undefined, 'dead everywhere within 6 s');
    const survivors = ids.filter((id) => id !== 'n5');
    await sim.run(30_000);
    assert.ok(sim.allSee(survivors, 'alive'));
    assert.deepEqual(falseDeaths(sim, new Set(['n5'])), []);
    await sim.stopAll();
  });

  it('a partition is seen from both sides, and heals once the network does', async () => {
    const { sim, ids } = await converged(15, 6);
    const left = ids.slice(0, 3);
    const right = ids.slice(3);
    sim.network.partition(left.map(simAddress), right.map(simAddress));
    const split = () => left.every((a) => right.every((b) => sim.view(a).get(b) === 'dead' && sim.view(b).get(a) === 'dead'));
    assert.ok(await sim.until(split, 30_000), 'each side declares the other dead');
    await sim.run(60_000);
    assert.ok(split(), 'and stays split while the network is');
    sim.network.heal();
    const healed = await sim.until(() => sim.allSee(ids, 'alive'), 2 * sim.settings.reconnect_interval + 5_000);
    assert.ok(healed !== undefined, 'the reconnect rounds bring both sides back together');
    await sim.stopAll();
  });
});
