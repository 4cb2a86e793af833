/**
 * Time as a seam (DESIGN.md section 1): the supervisors, and the agent actors
 * beside them, read time and arm timers only through a `Clock`, so tests drive
 * backoff and timeouts with a simulated clock instead of sleeping.
 *
 * The shape is a superset of XState's clock (`setTimeout`/`clearTimeout`), so
 * one clock can be handed to `createActor(machine, { clock })` as well and a
 * single simulated clock drives supervisors and agent machines together.
 */

/** Opaque: only the clock that returned it knows what it is. */
export type TimerHandle = unknown;

export interface Clock {
  /** Milliseconds on a monotonic scale; only differences are meaningful. */
  now(): number;
  /** Calls `callback` once, `delayMs` from now. */
  setTimeout(callback: () => void, delayMs: number): TimerHandle;
  /** Cancels a timer; a handle that already fired or was cleared is ignored. */
  clearTimeout(handle: TimerHandle): void;
  /**
   * Set when `now()` is real time: `timeOrigin + now()` is then milliseconds
   * since the epoch, so a reading can also stamp a trace span instead of a
   * second reading of the clock. A simulated clock leaves it unset.
   */
  readonly timeOrigin?: number;
}

/**
 * Node's timers overflow past 2^31 - 1 ms and fire at once instead; the real
 * clock clamps to this, and child specs refuse finite timeouts beyond it.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The process clock. `performance.now()` rather than `Date.now()` because a
 * wall-clock step (NTP, a manual change) must not empty or overflow a
 * restart-intensity window.
 */
export function createRealClock(): Clock {
  return {
    now: () => performance.now(),
    timeOrigin: performance.timeOrigin,
    setTimeout: (callback, delayMs) => globalThis.setTimeout(callback, Math.min(Math.max(0, delayMs), MAX_TIMER_MS)),
    clearTimeout: (handle) => globalThis.clearTimeout(handle as ReturnType<typeof globalThis.setTimeout>),
  };
}
