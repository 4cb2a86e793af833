/**
 * `npm run bench [-- name ...]`: runs the benchmarks (all, or those named) and
 * prints one table. Figures and the command go into docs/benchmarks.md.
 */
import { availableParallelism, cpus } from 'node:os';
import { renderTable, type Row } from './harness.js';
import { AGENT_BENCHMARKS } from './agents.bench.js';
import { GRPC_BENCHMARKS } from './api-grpc.bench.js';
import { HTTP_BENCHMARKS } from './api-http.bench.js';
import { BUS_BENCHMARKS } from './bus.bench.js';
import { OBSERVABILITY_BENCHMARKS } from './observability.bench.js';
import { SANDBOX_BENCHMARKS } from './sandbox.bench.js';
import { STORE_BENCHMARKS } from './store.bench.js';

const wanted = new Set(process.argv.slice(2));
const ALL = [...SANDBOX_BENCHMARKS, ...STORE_BENCHMARKS, ...BUS_BENCHMARKS, ...AGENT_BENCHMARKS, ...GRPC_BENCHMARKS, ...HTTP_BENCHMARKS, ...OBSERVABILITY_BENCHMARKS];
const unknown = [...wanted].filter((name) => !ALL.some(([known]) => known === name));
if (unknown.length > 0) {
  console.error(`unknown benchmark(s): ${unknown.join(', ')}; known: ${ALL.map(([name]) => name).join(', ')}`);
  process.exit(2);
}
const rows: Row[] = [];
for (const [name, run] of ALL) {
  if (wanted.size > 0 && !wanted.has(name)) continue;
  process.stderr.write(`running ${name}…\n`);
  rows.push(...(await run()));
}
console.log(`node ${process.version}, ${availableParallelism()} cores (${cpus()[0]?.model ?? 'unknown cpu'})\n`);
console.log(renderTable(rows));
const missed = rows.filter((r) => r.ok === false);
if (missed.length > 0) console.log(`\n${missed.length} target(s) missed: ${missed.map((r) => r.name.trim()).join('; ')}`);
