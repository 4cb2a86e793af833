/**
 * Cluster membership with the default settings.
 *
 * `cluster-simulation`, on the in-memory network and a simulated clock:
 * 200 nodes joining through one seed (time to converge, packets per node per
 * second while converging and once steady); and three nodes, one of which
 * crashes at a random moment, 40 times (time until both survivors declare it
 * dead), without loss and with 10% loss on every link.
 *
 * `cluster-loopback`, three nodes in this process on real UDP/TCP sockets on
 * 127.0.0.1, encrypted: time to join, and time until the two survivors
 * declare a stopped node dead, 10 times.
 *
 * Shaped for bench/run.ts (`CLUSTER_BENCHMARKS`); also runs alone:
 * `node --import tsx bench/cluster.bench.ts`.
 */
import { randomBytes } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { renderTable, summarise, type Row } from './harness.js';
import { openClusterNode } from '../src/cluster/cluster-node.js';
import type { Membership } from '../src/cluster/membership.js';
import { createSimCluster, DEFAULT_SWIM, simAddress } from '../src/cluster/simulation.js';

const NODES = 200;
const STEADY_MS = 60_000;
const DETECTION_TRIALS = 40;
const LOOPBACK_TRIALS = 10;

async function convergence(): Promise<Row[]> {
  const sim = createSimCluster({ seed: 200 });
  const ids = Array.from({ length: NODES }, (_, i) => `n${i}`);
  const wallStart = performance.now();
  await sim.start('n0');
  for (const id of ids.slice(1)) await sim.start(id, [simAddress('n0')]);
  const took = await sim.until(() => sim.allSee(ids, 'alive'), 120_000, 100);
  if (took === undefined) throw new Error(`${NODES} nodes did not converge within 120 s`);
  const wallMs = performance.now() - wallStart;
  const joining = sim.network.totals();
  await sim.run(STEADY_MS);
  const after = sim.network.totals();
  await sim.stopAll();
  const perNodeSecond = (packets: number, ms: number) => packets / NODES / (ms / 1000);
  return [
    { name: `${NODES} nodes join through one seed: time to converge (simulated)`, unit: 's', median: took / 1000 },
    { name: `  packets per node per second while converging`, unit: 'pkt/s', median: perNodeSecond(joining.packetsSent, took) },
    { name: `  packets per node per second, steady (${STEADY_MS / 1000} s)`, unit: 'pkt/s', median: perNodeSecond(after.packetsSent - joining.packetsSent, STEADY_MS) },
    { name: `  TCP exchanges per node per second, steady`, unit: 'req/s', median: (after.requests - joining.requests) / NODES / (STEADY_MS / 1000) },
    { name: `  wall time to simulate the convergence`, unit: 's', median: wallMs / 1000 },
  ];
}

/** Seconds from a crash at a random moment until both survivors of three see the node dead. */
async function detections(loss: number): Promise<number[]> {
  const samples: number[] = [];
  for (let trial = 0; trial < DETECTION_TRIALS; trial++) {
    const sim = createSimCluster({ seed: 1_000 + trial });
    await sim.start('a');
    await sim.start('b', [simAddress('a')]);
    await sim.start('c', [simAddress('a')]);
    if ((await sim.until(() => sim.allSee(['a', 'b', 'c'], 'alive'), 10_000)) === undefined) throw new Error('three nodes did not join');
    sim.network.setDefaults({ loss, delayMs: 1, jitterMs: 1 });
    await sim.run(5_000 + sim.random.next() * 1_000);
    await sim.crash('c');
    const took = await sim.until(() => sim.allSee(['c'], 'dead'), 30_000, 10);
    await sim.stopAll();
    if (took === undefined) throw new Error(`trial ${trial}: the crash went undetected for 30 s`);
    samples.push(took / 1000);
  }
  return samples;
}

function detectionRow(name: string, samples: number[]): Row {
  const s = summarise(samples);
  return { name, unit: 's (p99 = max)', median: s.median, p99: s.p99, target: 'p50 ≤ 3 s, max ≤ 6 s', ok: s.median <= 3 && s.p99 <= 6 };
}

export async function clusterSimulation(): Promise<Row[]> {
  return [
    ...(await convergence()),
    detectionRow(`3 nodes, a crash declared dead by both survivors (simulated, ${DETECTION_TRIALS} runs)`, await detections(0)),
    detectionRow(`  with 10% loss on every link`, await detections(0.1)),
  ];
}

/** Resolves once `done()` holds, checked at each change of the given memberships. */
function whenever(nodes: readonly Membership[], done: () => boolean, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const offs = nodes.map((n) => n.onChange(check));
    const timer = setTimeout(() => finish(() => reject(new Error(`not within ${timeoutMs} ms`))), timeoutMs);
    function finish(outcome: () => void): void {
      clearTimeout(timer);
      for (const off of offs) off();
      outcome();
    }
    function check(): void {
      if (done()) finish(resolve);
    }
    check();
  });
}

export async function clusterLoopback(): Promise<Row[]> {
  const settings = { ...DEFAULT_SWIM, addr: '127.0.0.1:0', advertise_addr: '', seeds: [], node_id: '', secret: randomBytes(32).toString('base64') };
  const joins: number[] = [];
  const detected: number[] = [];
  for (let trial = 0; trial < LOOPBACK_TRIALS; trial++) {
    const nodes = await Promise.all(['a', 'b', 'c'].map((id) => openClusterNode(settings, { nodeId: id })));
    const [a, b, c] = nodes as [Membership, Membership, Membership];
    try {
      const start = performance.now();
      await Promise.all([b.join([a.address]), c.join([a.address])]);
      await whenever(nodes, () => nodes.every((n) => n.counts().alive === 3), 10_000);
      joins.push((performance.now() - start) / 1000);
      // Let the probe rounds run a while, so the stop falls at a random point of them.
      await new Promise((resolve) => setTimeout(resolve, 2_000 + Math.random() * 1_000));
      const stopped = performance.now();
      await c.stop();
      await whenever([a, b], () => a.member('c')?.state === 'dead' && b.member('c')?.state === 'dead', 30_000);
      detected.push((performance.now() - stopped) / 1000);
    } finally {
      for (const node of nodes) await node.stop();
    }
  }
  const join = summarise(joins);
  return [
    { name: `3 nodes on loopback join (UDP+TCP, encrypted, ${LOOPBACK_TRIALS} runs)`, unit: 's (p99 = max)', median: join.median, p99: join.p99, target: '< 1 s', ok: join.p99 < 1 },
    detectionRow(`  a stopped node declared dead by both survivors`, detected),
  ];
}

export const CLUSTER_BENCHMARKS: ReadonlyArray<[string, () => Promise<Row[]>]> = [
  ['cluster-simulation', clusterSimulation],
  ['cluster-loopback', clusterLoopback],
];

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(renderTable([...(await clusterSimulation()), ...(await clusterLoopback())]));
}
