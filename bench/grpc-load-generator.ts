/**
 * The open-loop client of bench/api-grpc.bench.ts, run as its own process so
 * that generating load does not share the server's event loop (a client in
 * the server's process measures mostly the client).
 *
 * `node --import tsx bench/grpc-load-generator.ts ADDRESS RATE SECONDS MESSAGE_JSON`
 * sends RATE `SendMessage` calls per second for SECONDS after a warm-up
 * second, each when due whether or not earlier ones answered, and prints the
 * latencies (µs, from each call's start) as one JSON array.
 */
import { createGrpcClient, type MessageInput } from '../src/api/grpc/grpc-client.js';

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

const [address, rate, seconds, message] = process.argv.slice(2);
if (address !== undefined && rate !== undefined && seconds !== undefined && message !== undefined) {
  const client = createGrpcClient(address);
  const input = JSON.parse(message) as MessageInput;
  await openLoop(() => client.send(input), Number(rate), 1);
  const latencies = await openLoop(() => client.send(input), Number(rate), Number(seconds));
  client.close();
  process.stdout.write(JSON.stringify(latencies));
}
