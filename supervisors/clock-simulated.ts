/**
 * A clock for tests: time moves only when the test says so.
 *
 * XState ships a `SimulatedClock` with `increment`/`set`, but it runs every
 * due callback with `now()` already at the target time, so a timer armed from
 * inside a callback (a restart after a backoff, then a startup timeout) starts
 * from the wrong instant and exact delays cannot be checked; and it sorts
 * every pending timer on each step. This clock keeps the same method names and
 * XState-compatible shape, but fires each timer at its own due time, in order,
 * including timers armed while advancing, from a binary heap.
 *
 * Supervisors await promises between steps (a child's `start` may be async),
 * so `advance` also lets pending promise callbacks run before each timer and
 * at the end: one macrotask turn drains every queued microtask. No real time
 * is waited for.
 */
import type { Clock, TimerHandle } from './clock.js';

export interface SimulatedClock extends Clock {
  /** Moves time forward `ms`, firing due timers synchronously, each at its due time. */
  increment(ms: number): void;
  /** Moves time to `timeMs` (never backwards), as `increment`. */
  set(timeMs: number): void;
  /** As `increment`, letting promise callbacks run before each timer and after the last. */
  advance(ms: number): Promise<void>;
  /** Lets pending promise callbacks run without moving time. */
  settle(): Promise<void>;
  /** Timers armed and not yet fired or cleared. */
  pendingTimers(): number;
  /** When the next of them is due; undefined when none is armed. */
  nextDue(): number | undefined;
}

interface Timer {
  readonly id: number;
  readonly due: number;
  readonly callback: () => void;
}

export function createSimulatedClock(startMs = 0): SimulatedClock {
  let now = startMs;
  let nextId = 1;
  const heap: Timer[] = [];
  // Cleared timers stay in the heap until they surface; this map says which are live.
  const live = new Map<number, Timer>();

  const before = (a: Timer, b: Timer) => a.due < b.due || (a.due === b.due && a.id < b.id);

  function push(timer: Timer): void {
    heap.push(timer);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  }

  function pop(): void {
    const last = heap.pop()!;
    if (heap.length === 0) return;
    heap[0] = last;
    let i = 0;
    while (true) {
      const left = 2 * i + 1;
      const right = left + 1;
      let smallest = i;
      if (left < heap.length && before(heap[left]!, heap[smallest]!)) smallest = left;
      if (right < heap.length && before(heap[right]!, heap[smallest]!)) smallest = right;
      if (smallest === i) break;
      [heap[i], heap[smallest]] = [heap[smallest]!, heap[i]!];
      i = smallest;
    }
  }

  /** The next live timer due at or before `target`, removed from the clock. */
  function takeDue(target: number): Timer | undefined {
    while (heap.length > 0) {
      const top = heap[0]!;
      if (!live.has(top.id)) {
        pop();
        continue;
      }
      if (top.due > target) return undefined;
      pop();
      live.delete(top.id);
      return top;
    }
    return undefined;
  }

  function checkTarget(target: number): void {
    if (!Number.isFinite(target)) throw new RangeError(`simulated clock: cannot move to ${target}`);
    if (target < now) throw new RangeError(`simulated clock: cannot move back from ${now} to ${target}`);
  }

  const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

  function set(target: number): void {
    checkTarget(target);
    for (let timer = takeDue(target); timer; timer = takeDue(target)) {
      now = timer.due;
      timer.callback();
    }
    now = target;
  }

  return {
    now: () => now,
    setTimeout(callback, delayMs) {
      const timer: Timer = { id: nextId++, due: now + Math.max(0, delayMs), callback };
      live.set(timer.id, timer);
      push(timer);
      return timer.id;
    },
    clearTimeout(handle: TimerHandle) {
      if (typeof handle === 'number') live.delete(handle);
    },
    increment: (ms) => set(now + ms),
    set,
    async advance(ms) {
      const target = now + ms;
      checkTarget(target);
      await settle();
      for (let timer = takeDue(target); timer; timer = takeDue(target)) {
        now = timer.due;
        timer.callback();
        await settle();
      }
      now = target;
      await settle();
    },
    settle,
    pendingTimers: () => live.size,
    nextDue() {
      while (heap.length > 0 && !live.has(heap[0]!.id)) pop();
      return heap[0]?.due;
    },
  };
}
