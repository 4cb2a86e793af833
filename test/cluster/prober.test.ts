import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createSimCluster, simAddress, type SimCluster } from '../../src/cluster/simulation.js';

async function three(seed: number): Promise<SimCluster> {
  const sim = createSimCluster({ seed });
  await sim.start('n0');
  await sim.start('n1', [simAddress('n0')]);
  await sim.start('n2', [simAddress('n0')]);
  assert.ok(await sim.until(() => sim.allSee(['n0', 'n1', 'n2'], 'alive'), 5_000));
  return sim;
}

const isolate = (sim: SimCluster, id: string) => sim.network.partition([simAddress(id)], [...sim.nodes.keys()].filter((other) => other !== id).map(simAddress));
const health = (sim: SimCluster, id: string) => sim.nodes.get(id)!.membership.healthScore();

describe('prober (SWIM with Lifeguard)', () => {
  it('when the target is unreachable, nacks from helpers keep the prober healthy', async () => {
    const sim = await three(41);
    isolate(sim, 'n2');
    assert.ok(await sim.until(() => sim.view('n0').get('n2') === 'dead' && sim.view('n1').get('n2') === 'dead', 10_000));
    assert.equal(health(sim, 'n0'), 0);
    assert.equal(health(sim, 'n1'), 0);
    await sim.stopAll();
  });

  it('when the prober itself is cut off, silent helpers raise its health score and slow its probing', async () => {
    const sim = await three(42);
    isolate(sim, 'n0');
    await sim.run(5_000);
    assert.ok(health(sim, 'n0') >= 3, `n0's score is ${health(sim, 'n0')}`);
    assert.equal(health(sim, 'n1'), 0);
    assert.equal(health(sim, 'n2'), 0);
    const probes = sim.nodes.get('n0')!.membership.stats().probes;
    await sim.run(10_000);
    const probesWhileUnhealthy = sim.nodes.get('n0')!.membership.stats().probes - probes;
    assert.ok(probesWhileUnhealthy < 10_000 / sim.settings.probe_interval / 2, `${probesWhileUnhealthy} probes in 10 s`);
    sim.network.heal();
    assert.ok(await sim.until(() => health(sim, 'n0') === 0 && sim.allSee(['n0', 'n1', 'n2'], 'alive'), 60_000), 'it recovers with the network');
    await sim.stopAll();
  });

  it('an ack later than probe_timeout but within the probe interval still counts', async () => {
    const sim = await three(43);
    // A 300 ms round trip: past the 200 ms probe timeout, inside the 500 ms interval.
    sim.network.setDefaults({ delayMs: 150 });
    await sim.run(30_000);
    assert.deepEqual(sim.changes.filter((c) => c.to === 'suspect' || c.to === 'dead'), []);
    await sim.stopAll();
  });
});
