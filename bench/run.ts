/**
 * `npm run bench [-- name ...]`: runs the benchmarks (all, or those named) and
 * prints one table. Figures and the command go into docs/benchmarks.md.
 */
import { availableParallelism, cpus } from 'node:os';
import { renderTable, type Row } from './harness.js';
import { BUS_BENCHMARKS } from './bus.bench.js';
import { SANDBOX_BENCHMARKS } from './sandbox.bench.js';
import { STORE_BENCHMARKS } from './store.bench.js';

const wanted = new Set(process.argv.slice(2));
const rows: Row[] = [];
for (const [name, run] of [...SANDBOX_BENCHMARKS, ...STORE_BENCHMARKS, ...BUS_BENCHMARKS]) {
  if (wanted.size > 0 && !wanted.has(name)) continue;
  process.stderr.write(`running ${name}…\n`);
  rows.push(...(await run()));
}
console.log(`node ${process.version}, ${availableParallelism()} cores (${cpus()[0]?.model ?? 'unknown cpu'})\n`);
console.log(renderTable(rows));
const missed = rows.filter((r) => r.ok === false);
if (missed.length > 0) console.log(`\n${missed.length} target(s) missed: ${missed.map((r) => r.name.trim()).join('; ')}`);
