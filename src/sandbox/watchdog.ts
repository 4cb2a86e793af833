/**
 * The hard stop behind fuel (DESIGN.md section 6). Each worker owns a small
 * SharedArrayBuffer slot that it writes with Atomics when an execution or a
 * start begins and ends: what runs (request id, agent index) and since when.
 * The main thread reads every slot on a short unref'd timer and reports a run
 * past its timeout; the pool then terminates that worker. A worker stuck in a
 * loop cannot answer messages, so shared memory is the only way to see it.
 *
 * Both sides use the process-wide monotonic clock (`process.hrtime`), which
 * every thread reads alike; tests inject a clock into both sides.
 */

/** Int32 cells (state, batch, item index, agent index), then the start time as a BigInt64 at byte 16. */
const STATE = 0;
const BATCH = 1;
const INDEX = 2;
const AGENT = 3;
const START_OFFSET = 16;
export const SLOT_BYTES = 24;

const IDLE = 0;
const KIND_CODES = { execute: 1, start: 2 } as const;
export type SlotKind = keyof typeof KIND_CODES;

/** Watchdog period: well under the 50 ms of overrun the tests allow, and cheap (a few Atomics loads per worker). */
export const WATCHDOG_PERIOD_MS = 10;

/** The watchdog's time source; tests inject a simulated one into both the slot writer and the watchdog. */
export interface MonotonicClock {
  nowNs(): bigint;
}

export const hrtimeClock: MonotonicClock = { nowNs: () => process.hrtime.bigint() };

export function createSlot(): SharedArrayBuffer {
  return new SharedArrayBuffer(SLOT_BYTES);
}

/** The worker's side. */
export interface SlotWriter {
  /** Marks item `index` of `batch` as running; returns its start time. */
  begin(kind: SlotKind, batch: number, index: number, agentIndex: number): bigint;
  end(): void;
}

export function slotWriter(slot: SharedArrayBuffer, clock: MonotonicClock = hrtimeClock): SlotWriter {
  const cells = new Int32Array(slot, 0, 4);
  const start = new BigInt64Array(slot, START_OFFSET, 1);
  return {
    begin(kind, batch, index, agentIndex) {
      const now = clock.nowNs();
      Atomics.store(start, 0, now);
      Atomics.store(cells, BATCH, batch);
      Atomics.store(cells, INDEX, index);
      Atomics.store(cells, AGENT, agentIndex);
      // State last: a reader that sees it non-idle sees the fields written above.
      Atomics.store(cells, STATE, KIND_CODES[kind]);
      return now;
    },
    end() {
      Atomics.store(cells, STATE, IDLE);
    },
  };
}

export interface SlotReading {
  kind: SlotKind;
  batch: number;
  index: number;
  agentIndex: number;
  startNs: bigint;
}

/** What the slot shows now, or null when idle or changing under the reader. */
export function readSlot(slot: SharedArrayBuffer): SlotReading | null {
  const cells = new Int32Array(slot, 0, 4);
  const start = new BigInt64Array(slot, START_OFFSET, 1);
  const state = Atomics.load(cells, STATE);
  if (state === IDLE) return null;
  const batch = Atomics.load(cells, BATCH);
  const index = Atomics.load(cells, INDEX);
  const agentIndex = Atomics.load(cells, AGENT);
  const startNs = Atomics.load(start, 0);
  // A run that ended and another that began between the loads: skip this tick.
  if (Atomics.load(cells, STATE) !== state || Atomics.load(cells, BATCH) !== batch || Atomics.load(cells, INDEX) !== index) return null;
  return { kind: state === KIND_CODES.start ? 'start' : 'execute', batch, index, agentIndex, startNs };
}

export interface Overrun extends SlotReading {
  workerId: number;
  elapsedMs: number;
}

export interface WatchdogOptions {
  executionTimeoutMs: number;
  startupTimeoutMs: number;
  onOverrun(overrun: Overrun): void;
  periodMs?: number;
  clock?: MonotonicClock;
}

export interface Watchdog {
  watch(workerId: number, slot: SharedArrayBuffer): void;
  unwatch(workerId: number): void;
  /** Reads every slot once and reports each run past its timeout (at most once per run). */
  check(): Overrun[];
  start(): void;
  stop(): void;
}

export function createWatchdog(options: WatchdogOptions): Watchdog {
  const clock = options.clock ?? hrtimeClock;
  const slots = new Map<number, SharedArrayBuffer>();
  /** Per worker, the run last reported (`batch:index`), so a run is reported once. */
  const reported = new Map<number, string>();
  let timer: NodeJS.Timeout | undefined;

  function check(): Overrun[] {
    const now = clock.nowNs();
    const overruns: Overrun[] = [];
    for (const [workerId, slot] of slots) {
      const reading = readSlot(slot);
      if (reading === null) continue;
      const elapsedMs = Number(now - reading.startNs) / 1e6;
      const limit = reading.kind === 'start' ? options.startupTimeoutMs : options.executionTimeoutMs;
      const run = `${reading.batch}:${reading.index}`;
      if (elapsedMs <= limit || reported.get(workerId) === run) continue;
      reported.set(workerId, run);
      overruns.push({ workerId, elapsedMs, ...reading });
    }
    for (const overrun of overruns) options.onOverrun(overrun);
    return overruns;
  }

  return {
    watch(workerId, slot) {
      slots.set(workerId, slot);
      reported.delete(workerId);
    },
    unwatch(workerId) {
      slots.delete(workerId);
      reported.delete(workerId);
    },
    check,
    start() {
      if (timer !== undefined) return;
      timer = setInterval(check, options.periodMs ?? WATCHDOG_PERIOD_MS);
      timer.unref();
    },
    stop() {
      if (timer !== undefined) clearInterval(timer);
      timer = undefined;
    },
  };
}
