/**
 * Cost of the durable write a deploy waits on: `putAgentWithModule` with a
 * 12 KiB module, a new module each time and one module shared by every agent,
 * under both synchronous modes (the figures behind `DEFAULT_SYNCHRONOUS`).
 * Standalone: `node --import tsx bench/store.bench.ts`; the rows have
 * the shape `bench/run.ts` prints.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { renderTable, summarise, type Row } from './harness.js';
import { createStore, DEFAULT_SYNCHRONOUS, type SynchronousMode } from '../src/store/store.js';

const MODULE_BYTES = 12 * 1024;
const ITERATIONS = 2_000;
const WARMUP = 100;

function putAgent(synchronous: SynchronousMode, sharedModule: boolean): Row {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-store-bench-'));
  const store = createStore({ dataDir, synchronous });
  try {
    const shared = randomBytes(MODULE_BYTES);
    const samples: number[] = [];
    for (let i = 0; i < WARMUP + ITERATIONS; i++) {
      const bytes = sharedModule ? shared : randomBytes(MODULE_BYTES);
      const agent = {
        agentId: `agent-${i}`,
        name: `bench-${i}`,
        capabilities: ['echo'],
        resources: { memoryLimit: 16 * 1024 * 1024, cpuShares: 1024 },
        desiredState: 'running' as const,
        nodeId: 'bench',
        createdAt: Date.now(),
      };
      const start = process.hrtime.bigint();
      store.putAgentWithModule(agent, bytes);
      if (i >= WARMUP) samples.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
    const { median, p99 } = summarise(samples);
    const chosen = synchronous === DEFAULT_SYNCHRONOUS ? ' (default)' : '';
    return {
      name: `store put, ${sharedModule ? 'same' : 'new'} 12 KiB module, synchronous=${synchronous}${chosen}`,
      unit: 'ms',
      median,
      p99,
      target: 'deploy p50 ≤ 5, p99 ≤ 20',
      ok: median <= 5 && p99 <= 20,
    };
  } finally {
    store.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export const STORE_BENCHMARKS: ReadonlyArray<[string, () => Promise<Row[]>]> = [
  [
    'store',
    async () =>
      (['full', 'normal'] as const).flatMap((mode) => [putAgent(mode, false), putAgent(mode, true)]),
  ],
];

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const [, run] of STORE_BENCHMARKS) console.log(renderTable(await run()));
}
