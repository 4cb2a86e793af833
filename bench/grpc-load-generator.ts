/**
 * The open-loop client of bench/api-grpc.bench.ts, run as its own process so
 * that generating load does not share the server's event loop (a client in
 * the server's process measures mostly the client).
 *
 * `node --import tsx bench/grpc-load-generator.ts ADDRESS RATE SECONDS MESSAGE_JSON`
 * sends RATE `SendMessage` calls per second for SECONDS after a warm-up
 * second, each when due whether or not earlier ones answered, and prints the
 * latencies (µs, from each call's start) and its own event-loop delay as one
 * JSON object (`LoadReport`).
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { createGrpcClient, type MessageInput } from '../src/api/grpc/grpc-client.js';

/** What a generator prints: each answered call's latency (µs), the calls that failed, and its own event-loop delay while measuring (µs, of a 1 ms timer). */
export interface LoadReport {
  latencies: number[];
  failed: number;
  loopDelayP99Us: number;
  loopDelayMaxUs: number;
}

/**
 * Offers `rate` calls per second for `seconds`; returns each call's latency in
 * µs. Paced by a 1 ms timer that starts every call due by then, rather than by
 * spinning: a spinning client would take a core from the server it measures.
 * The generator's own pauses count in every latency it measures, so it keeps
 * its heap still: latencies go into one preallocated array, calls are counted
 * rather than kept, and a collection (with `--expose-gc`) runs before the
 * measured calls start.
 */
export async function openLoop(call: () => Promise<unknown>, rate: number, seconds: number): Promise<number[]> {
  (globalThis as { gc?: () => void }).gc?.();
  const total = rate * seconds;
  const intervalNs = 1e9 / rate;
  const latencies = new Float64Array(total);
  let answered = 0;
  let settled = 0;
  let allSettled: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (allSettled = resolve));
  const settle = (): void => {
    settled += 1;
    if (settled === total) allSettled();
  };
  const start = process.hrtime.bigint();
  let started = 0;
  while (started < total) {
    const due = Math.min(total, Math.floor(Number(process.hrtime.bigint() - start) / intervalNs) + 1);
    for (; started < due; started++) {
      const sentAt = process.hrtime.bigint();
      call().then(() => {
        latencies[answered++] = Number(process.hrtime.bigint() - sentAt) / 1000;
        settle();
      }, settle);
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  await done;
  return Array.from(latencies.subarray(0, answered));
}

/**
 * A generator's run: a warm-up second at `rate`, then `seconds` measured, with
 * the generator's own event-loop delay beside the latencies. A failed call is
 * counted (the first one is described on stderr) and has no latency.
 */
export async function measureLoad(call: () => Promise<unknown>, rate: number, seconds: number): Promise<LoadReport> {
  let failed = 0;
  let firstFailure = '';
  const counted = (): Promise<unknown> =>
    call().catch((error: unknown) => {
      failed += 1;
      firstFailure ||= String(error);
      throw error;
    });
  await openLoop(counted, rate, 1);
  // Only the measured calls count.
  failed = 0;
  firstFailure = '';
  // How late the generator's own event loop ran while it measured: every such delay is in the latencies too.
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const latencies = await openLoop(counted, rate, seconds);
  delay.disable();
  if (failed > 0) process.stderr.write(`${failed} calls failed; the first: ${firstFailure}\n`);
  return { latencies, failed, loopDelayP99Us: delay.percentile(99) / 1000, loopDelayMaxUs: delay.max / 1000 };
}

const [address, rate, seconds, message] = process.argv.slice(2);
const isMain = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (isMain && address !== undefined && rate !== undefined && seconds !== undefined && message !== undefined) {
  const client = createGrpcClient(address);
  const input = JSON.parse(message) as MessageInput;
  const report = await measureLoad(() => client.send(input), Number(rate), Number(seconds));
  client.close();
  process.stdout.write(JSON.stringify(report));
}
