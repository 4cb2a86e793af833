/**
 * The hard stop behind fuel (DESIGN.md section 6). Each worker owns a small
 * SharedArrayBuffer slot that it writes with Atomics when an execution or a
 * start begins and ends: what runs (batch, item, instance index). The main
 * thread reads every slot on a short timer of the injected clock and times
 * each run from when it first saw it; a run past its timeout is reported and
 * the pool terminates that worker. A worker stuck in a loop cannot answer
 * messages, so shared memory is the only way to see it.
 *
 * Time is the pool's clock (supervisors/clock.ts), so tests drive the
 * watchdog with a simulated clock. A run is timed from its first sighting,
 * so it is stopped between its timeout and its timeout plus two periods.
 */
import type { Clock, TimerHandle } from '../../supervisors/index.js';

/** Int32 cells: state, batch, item index, instance index. */
const STATE = 0;
const BATCH = 1;
const INDEX = 2;
const AGENT = 3;
export const SLOT_BYTES = 16;

const IDLE = 0;
const KIND_CODES = { execute: 1, start: 2 } as const;
export type SlotKind = keyof typeof KIND_CODES;

/** Watchdog period: well under the 50 ms of overrun the watchdog benchmark allows, and cheap (a few Atomics loads per worker). */
export const WATCHDOG_PERIOD_MS = 10;

export function createSlot(): SharedArrayBuffer {
  return new SharedArrayBuffer(SLOT_BYTES);
}

/** The worker's side. */
export interface SlotWriter {
  /** Marks item `index` of `batch` as running. */
  begin(kind: SlotKind, batch: number, index: number, agentIndex: number): void;
  end(): void;
}

export function slotWriter(slot: SharedArrayBuffer): SlotWriter {
  const cells = new Int32Array(slot, 0, 4);
  return {
    begin(kind, batch, index, agentIndex) {
      Atomics.store(cells, BATCH, batch);
      Atomics.store(cells, INDEX, index);
      Atomics.store(cells, AGENT, agentIndex);
      // State last: a reader that sees it non-idle sees the fields written above.
      Atomics.store(cells, STATE, KIND_CODES[kind]);
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
}

/** What the slot shows now, or null when idle or changing under the reader. */
export function readSlot(slot: SharedArrayBuffer): SlotReading | null {
  const cells = new Int32Array(slot, 0, 4);
  const state = Atomics.load(cells, STATE);
  if (state === IDLE) return null;
  const batch = Atomics.load(cells, BATCH);
  const index = Atomics.load(cells, INDEX);
  const agentIndex = Atomics.load(cells, AGENT);
  // A run that ended and another that began between the loads: skip this tick.
  if (Atomics.load(cells, STATE) !== state || Atomics.load(cells, BATCH) !== batch || Atomics.load(cells, INDEX) !== index) return null;
  return { kind: state === KIND_CODES.start ? 'start' : 'execute', batch, index, agentIndex };
}

export interface Overrun extends SlotReading {
  workerId: number;
  /** Since the watchdog first saw the run. */
  elapsedMs: number;
}

export interface WatchdogOptions {
  executionTimeoutMs: number;
  startupTimeoutMs: number;
  onOverrun(overrun: Overrun): void;
  clock: Clock;
  periodMs?: number;
}

export interface Watchdog {
  watch(workerId: number, slot: SharedArrayBuffer): void;
  unwatch(workerId: number): void;
  /** Reads every slot once and reports each run past its timeout (at most once per run). */
  check(): Overrun[];
  start(): void;
  stop(): void;
}

/** The run a worker was last seen in: since when, and whether it was reported. */
interface Sighting {
  kind: SlotKind;
  batch: number;
  index: number;
  sinceMs: number;
  reported: boolean;
}

export function createWatchdog(options: WatchdogOptions): Watchdog {
  const { clock } = options;
  const periodMs = options.periodMs ?? WATCHDOG_PERIOD_MS;
  const slots = new Map<number, SharedArrayBuffer>();
  const sightings = new Map<number, Sighting>();
  let timer: TimerHandle | undefined;

  function check(): Overrun[] {
    const now = clock.now();
    const overruns: Overrun[] = [];
    for (const [workerId, slot] of slots) {
      const reading = readSlot(slot);
      if (reading === null) {
        sightings.delete(workerId);
        continue;
      }
      const seen = sightings.get(workerId);
      if (seen === undefined || seen.batch !== reading.batch || seen.index !== reading.index || seen.kind !== reading.kind) {
        sightings.set(workerId, { kind: reading.kind, batch: reading.batch, index: reading.index, sinceMs: now, reported: false });
        continue;
      }
      const elapsedMs = now - seen.sinceMs;
      const limit = reading.kind === 'start' ? options.startupTimeoutMs : options.executionTimeoutMs;
      if (elapsedMs <= limit || seen.reported) continue;
      seen.reported = true;
      overruns.push({ workerId, elapsedMs, ...reading });
    }
    for (const overrun of overruns) options.onOverrun(overrun);
    return overruns;
  }

  function tick(): void {
    timer = clock.setTimeout(tick, periodMs);
    check();
  }

  return {
    watch(workerId, slot) {
      slots.set(workerId, slot);
      sightings.delete(workerId);
    },
    unwatch(workerId) {
      slots.delete(workerId);
      sightings.delete(workerId);
    },
    check,
    start() {
      if (timer === undefined) timer = clock.setTimeout(tick, periodMs);
    },
    stop() {
      if (timer !== undefined) clock.clearTimeout(timer);
      timer = undefined;
    },
  };
}
