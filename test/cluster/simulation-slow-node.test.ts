import assert from 'node:assert/strict';
import { it } from 'node:test';
import { createSimCluster, falseDeaths, simAddress } from '../../src/cluster/simulation.js';

it('a slow node (its event loop stalls 1.5 s of every 2 s) accuses nobody and kills nobody', async () => {
  const sim = createSimCluster({ seed: 31 });
  const ids = Array.from({ length: 6 }, (_, i) => `n${i}`);
  await sim.start('n0');
  for (const id of ids.slice(1)) await sim.start(id, [simAddress('n0')]);
  assert.ok(await sim.until(() => sim.allSee(ids, 'alive'), 10_000));
  const slow = sim.nodes.get('n1')!;
  for (let i = 0; i < 60; i++) {
    slow.clock.stall(1_500);
    await sim.run(2_000);
  }
  const healthy = ids.filter((id) => id !== 'n1');
  assert.deepEqual(falseDeaths(sim).filter((c) => c.node_id !== 'n1'), [], 'no healthy node is declared dead, anywhere');
  assert.deepEqual(
    sim.changes.filter((c) => c.to === 'suspect' && c.by === 'n1').map((c) => `${c.observer} heard n1 suspect ${c.node_id}`),
    [],
    'its late timers count against its own health, not against its peers',
  );
  assert.ok(slow.membership.healthScore() > 0, 'Lifeguard: its local health score rose');
  await sim.run(10_000);
  assert.ok(sim.allSee(healthy, 'alive'));
  await sim.stopAll();
});
