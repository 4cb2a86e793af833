/**
 * `npm run bench [-- name ...]`: runs the benchmarks (all, or those named) and
 * prints one table. Figures and the command go into docs/benchmarks.md.
 *
 * Each benchmark runs in a process of its own, started the way this one was
 * (`--import tsx --expose-gc`): what one leaves behind (10,000 agents' worth
 * of heap, worker threads, timers) must not weigh on the next one's figures.
 * The child is this file again, with `SVC_BENCH_ROWS` naming the file its
 * rows go to.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderTable, type Row } from './harness.js';
import { AGENT_BENCHMARKS } from './agents.bench.js';
import { GRPC_BENCHMARKS } from './api-grpc.bench.js';
import { HTTP_BENCHMARKS } from './api-http.bench.js';
import { BUS_BENCHMARKS } from './bus.bench.js';
import { CLUSTER_BENCHMARKS } from './cluster.bench.js';
import { CLUSTER_FAILOVER_BENCHMARKS } from './cluster-failover.bench.js';
import { CLUSTER_ROUTING_BENCHMARKS } from './cluster-routing.bench.js';
import { MACHINE_BENCHMARKS } from './machine.bench.js';
import { OBSERVABILITY_BENCHMARKS } from './observability.bench.js';
import { SANDBOX_BENCHMARKS } from './sandbox.bench.js';
import { SECURITY_BENCHMARKS } from './security.bench.js';
import { STORE_BENCHMARKS } from './store.bench.js';
import { THROUGHPUT_BENCHMARKS } from './throughput.bench.js';

const wanted = new Set(process.argv.slice(2));
const ALL = [...SANDBOX_BENCHMARKS, ...STORE_BENCHMARKS, ...BUS_BENCHMARKS, ...AGENT_BENCHMARKS, ...GRPC_BENCHMARKS, ...HTTP_BENCHMARKS, ...OBSERVABILITY_BENCHMARKS, ...SECURITY_BENCHMARKS, ...MACHINE_BENCHMARKS, ...CLUSTER_BENCHMARKS, ...CLUSTER_ROUTING_BENCHMARKS, ...THROUGHPUT_BENCHMARKS, ...CLUSTER_FAILOVER_BENCHMARKS];
const unknown = [...wanted].filter((name) => !ALL.some(([known]) => known === name));
if (unknown.length > 0) {
  console.error(`unknown benchmark(s): ${unknown.join(', ')}; known: ${ALL.map(([name]) => name).join(', ')}`);
  process.exit(2);
}
const selected = ALL.filter(([name]) => wanted.size === 0 || wanted.has(name));

/** Rows as JSON; a median or p99 that is not finite (no samples) travels as text. */
function encodeRows(rows: readonly Row[]): string {
  return JSON.stringify(rows, (_key, value: unknown) => (typeof value === 'number' && !Number.isFinite(value) ? String(value) : value));
}

function decodeRows(text: string): Row[] {
  return JSON.parse(text, (key, value: unknown) => ((key === 'median' || key === 'p99') && typeof value === 'string' ? Number(value) : value)) as Row[];
}

/** Runs benchmark `name` in a fresh process; resolves with its rows, or undefined when it failed (its stderr says why). */
function runIsolated(name: string, dir: string): Promise<Row[] | undefined> {
  const file = join(dir, `${name}.json`);
  const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), name], {
    env: { ...process.env, SVC_BENCH_ROWS: file },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => resolve(code === 0 ? decodeRows(readFileSync(file, 'utf8')) : undefined));
  });
}

const rowsFile = process.env.SVC_BENCH_ROWS;
if (rowsFile !== undefined) {
  // A child: the benchmarks named, here, and the rows back to the parent.
  const rows: Row[] = [];
  for (const [, run] of selected) rows.push(...(await run()));
  writeFileSync(rowsFile, encodeRows(rows));
  // Done: a handle some library left open must not keep the run waiting.
  process.exit(0);
} else {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-'));
  const rows: Row[] = [];
  const failed: string[] = [];
  try {
    for (const [name] of selected) {
      process.stderr.write(`running ${name}…\n`);
      const result = await runIsolated(name, dir);
      if (result === undefined) failed.push(name);
      else rows.push(...result);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(`node ${process.version}, ${availableParallelism()} cores (${cpus()[0]?.model ?? 'unknown cpu'}), each benchmark in its own process\n`);
  console.log(renderTable(rows));
  const missed = rows.filter((r) => r.ok === false);
  if (missed.length > 0) console.log(`\n${missed.length} target(s) missed: ${missed.map((r) => r.name.trim()).join('; ')}`);
  if (failed.length > 0) {
    console.log(`\n${failed.length} benchmark(s) failed: ${failed.join(', ')}`);
    process.exitCode = 1;
  }
}
