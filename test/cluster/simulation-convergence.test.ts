import assert from 'node:assert/strict';
import { it } from 'node:test';
import { createSimCluster, falseDeaths, simAddress } from '../../src/cluster/simulation.js';

const NODES = 200;

it(`${NODES} nodes joining through one seed converge, with no false death`, async () => {
  const sim = createSimCluster({ seed: 43 });
  const ids = Array.from({ length: NODES }, (_, i) => `n${i}`);
  await sim.start('n0');
  for (const id of ids.slice(1)) await sim.start(id, [simAddress('n0')]);
  const took = await sim.until(() => sim.allSee(ids, 'alive'), 30_000, 100);
  assert.ok(took !== undefined, 'every node sees every other alive within 30 s of simulated time');
  await sim.run(10_000);
  assert.ok(sim.allSee(ids, 'alive'));
  assert.deepEqual(falseDeaths(sim), []);
  await sim.stopAll();
});
