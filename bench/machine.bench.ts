/**
 * What handing work to another thread costs on this machine: the figure
 * under every throughput figure of the message path, where the main thread
 * and an executor take turns and each turn starts with a `postMessage` that
 * wakes the other.
 *
 * The main thread keeps its core busy for a set time while a worker sleeps,
 * then posts it a message, as the executor pool posts a batch. Measured: how
 * long `postMessage` holds the sender, and how long until the worker runs
 * (post to the worker's first instruction, both read on the same clock).
 * The idle times are interleaved at random, so each sees the same machine.
 * A last row posts to a worker that is busy when the message arrives, so no
 * wake-up is due. No svc code runs here, and there is no target: the rows
 * describe the machine the other benchmarks run on.
 * Shaped for bench/run.ts (`MACHINE_BENCHMARKS`); also runs alone:
 * `node --import tsx bench/machine.bench.ts`.
 */
import { once } from 'node:events';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { renderTable, summarise, type Row } from './harness.js';

/** The receiver's idle time before each post, µs; the first is the baseline. */
const IDLE_US = [20, 200, 1000] as const;
const SAMPLES = 400;
const WARMUP = 40;
/** How long the busy receiver keeps working after it answers, µs: longer than the sender takes to post again. */
const BUSY_US = 300;

/**
 * The worker: answers each message with the time it started handling it,
 * then, when asked, keeps its thread busy before going back to sleep.
 */
const WORKER = `
const { parentPort } = require('node:worker_threads');
const now = () => performance.timeOrigin + performance.now();
parentPort.on('message', (busyUs) => {
  parentPort.postMessage(now());
  const end = performance.now() + busyUs / 1000;
  while (performance.now() < end);
});
`;

const now = (): number => performance.timeOrigin + performance.now();

function spin(us: number): void {
  const end = performance.now() + us / 1000;
  while (performance.now() < end);
}

interface Handoff {
  postUs: number;
  wakeUs: number;
}

/** One handoff: the sender busy `idleUs` (the worker asleep meanwhile), then a post; the worker stays busy `busyUs` after answering. */
async function handoff(worker: Worker, idleUs: number, busyUs: number): Promise<Handoff> {
  spin(idleUs);
  const answered = once(worker, 'message') as Promise<[number]>;
  const sent = now();
  worker.postMessage(busyUs);
  const posted = now();
  const [started] = await answered;
  return { postUs: (posted - sent) * 1000, wakeUs: (started - sent) * 1000 };
}

export async function threadHandoff(): Promise<Row[]> {
  const worker = new Worker(WORKER, { eval: true });
  try {
    await once(worker, 'online');
    const byIdle = new Map<number, Handoff[]>(IDLE_US.map((idle) => [idle, []]));
    const busy: Handoff[] = [];
    for (let round = 0; round < WARMUP + SAMPLES; round++) {
      const order = [...IDLE_US].sort(() => Math.random() - 0.5);
      for (const idle of order) {
        const sample = await handoff(worker, idle, 0);
        if (round >= WARMUP) byIdle.get(idle)!.push(sample);
      }
      // The worker answers, then works on for BUSY_US: the post below reaches a thread that is running.
      await handoff(worker, 0, BUSY_US);
      const sample = await handoff(worker, 20, 0);
      if (round >= WARMUP) busy.push(sample);
    }
    const post = (samples: Handoff[]) => summarise(samples.map((s) => s.postUs));
    const wake = (samples: Handoff[]) => summarise(samples.map((s) => s.wakeUs));
    const [first] = IDLE_US;
    const postBase = { name: `receiver idle ${first} µs`, median: post(byIdle.get(first)!).median };
    const wakeBase = { name: `receiver idle ${first} µs`, median: wake(byIdle.get(first)!).median };
    const rows: Row[] = [];
    for (const idle of IDLE_US) {
      const p = post(byIdle.get(idle)!);
      rows.push({ name: `postMessage to a sleeping thread, its core idle ${idle} µs (sender's time)`, unit: 'µs', median: p.median, p99: p.p99, ...(idle === first ? {} : { baseline: postBase }) });
    }
    for (const idle of IDLE_US) {
      const w = wake(byIdle.get(idle)!);
      rows.push({ name: `  until that thread runs, its core idle ${idle} µs`, unit: 'µs', median: w.median, p99: w.p99, ...(idle === first ? {} : { baseline: wakeBase }) });
    }
    const b = post(busy);
    rows.push({ name: 'postMessage to a running thread (sender\'s time)', unit: 'µs', median: b.median, p99: b.p99, baseline: postBase });
    return rows;
  } finally {
    await worker.terminate();
  }
}

export const MACHINE_BENCHMARKS: ReadonlyArray<[string, () => Promise<Row[]>]> = [['machine-handoff', threadHandoff]];

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(renderTable(await threadHandoff()));
}
