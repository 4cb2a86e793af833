/**
 * One suspicion of one member (Lifeguard's LHA-Suspicion, memberlist's
 * `suspicion.go`): a timer that starts at the maximum timeout and shortens
 * with each independent confirmation, down to the minimum after `k` of them.
 * Confirmations are counted once per accuser; the first accuser is not one.
 */
import type { Clock, TimerHandle } from '../../supervisors/clock.js';
import { remainingSuspicionMs } from './formulas.js';

export interface Suspicion {
  /** Counts `from` if it is new and more confirmations still shorten the timer; true when it counted (re-gossip it then). */
  confirm(from: string): boolean;
  readonly confirmations: number;
  cancel(): void;
}

export interface SuspicionOptions {
  readonly clock: Clock;
  readonly from: string;
  readonly k: number;
  readonly minMs: number;
  readonly maxMs: number;
  readonly onTimeout: (confirmations: number) => void;
}

export function createSuspicion(options: SuspicionOptions): Suspicion {
  const { clock, k, minMs, maxMs } = options;
  const start = clock.now();
  const accusers = new Set([options.from]);
  let confirmations = 0;
  let done = false;
  const fire = () => {
    if (done) return;
    done = true;
    options.onTimeout(confirmations);
  };
  let timer: TimerHandle = clock.setTimeout(fire, k < 1 ? minMs : maxMs);
  return {
    confirm(from) {
      if (done || confirmations >= k || accusers.has(from)) return false;
      accusers.add(from);
      confirmations += 1;
      clock.clearTimeout(timer);
      timer = clock.setTimeout(fire, Math.max(0, remainingSuspicionMs(confirmations, k, clock.now() - start, minMs, maxMs)));
      return true;
    },
    get confirmations() {
      return confirmations;
    },
    cancel() {
      done = true;
      clock.clearTimeout(timer);
    },
  };
}
