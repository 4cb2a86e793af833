/**
 * One node's clock over a shared (simulated) clock, for simulations of a slow
 * node: `stall(ms)` freezes the node as a blocked event loop would. Nothing it
 * owns runs until the stall ends; then its timers that fell due run first, in
 * order, and only then the packets that arrived meanwhile, as Node runs its
 * timers phase before it polls for I/O. Timers that ran late report their
 * lateness as event-loop delay, the reading `monitorEventLoopDelay` gives a
 * real node.
 */
import type { Clock, TimerHandle } from '../../supervisors/clock.js';
import type { LoopDelaySource } from './loop-delay.js';

export interface StallableClock extends Clock {
  /** From now, this node runs nothing for `ms`. A stall during a stall extends it. */
  stall(ms: number): void;
  readonly stalled: boolean;
  /** Runs an arrival now, or after the stall (after the timers due in it). */
  deliver(callback: () => void): void;
  readonly loopDelay: LoopDelaySource;
}

interface Handle {
  base: TimerHandle;
  due: number;
  callback: () => void;
  cancelled: boolean;
}

export function createStallableClock(base: Clock): StallableClock {
  let stalledUntil = -Infinity;
  let resumeTimer: TimerHandle | undefined;
  let lateTimers: Handle[] = [];
  let arrivals: Array<() => void> = [];
  let maxLateness = 0;

  const isStalled = () => base.now() < stalledUntil;

  function resume(): void {
    resumeTimer = undefined;
    const timers = lateTimers;
    const waiting = arrivals;
    lateTimers = [];
    arrivals = [];
    for (const handle of timers) {
      if (handle.cancelled) continue;
      maxLateness = Math.max(maxLateness, base.now() - handle.due);
      handle.callback();
    }
    for (const arrival of waiting) arrival();
  }

  return {
    now: () => base.now(),
    setTimeout(callback, delayMs) {
      const handle: Handle = { base: undefined, due: base.now() + Math.max(0, delayMs), callback, cancelled: false };
      handle.base = base.setTimeout(() => {
        if (handle.cancelled) return;
        if (isStalled()) lateTimers.push(handle);
        else callback();
      }, delayMs);
      return handle;
    },
    clearTimeout(handle) {
      const h = handle as Handle;
      h.cancelled = true;
      base.clearTimeout(h.base);
    },
    stall(ms) {
      stalledUntil = Math.max(stalledUntil, base.now() + ms);
      if (resumeTimer !== undefined) base.clearTimeout(resumeTimer);
      resumeTimer = base.setTimeout(resume, stalledUntil - base.now());
    },
    get stalled() {
      return isStalled();
    },
    deliver(callback) {
      if (isStalled()) arrivals.push(callback);
      else callback();
    },
    loopDelay: {
      takeMaxDelayMs() {
        const max = maxLateness;
        maxLateness = 0;
        return max;
      },
      close() {},
    },
  };
}
