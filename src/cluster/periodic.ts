/**
 * A task run every interval on the injected clock, its first run at a random
 * point within the first interval so nodes started together do not gossip in
 * lockstep. The interval is read again before each run (it scales with the
 * cluster's size and this node's health).
 */
import type { Clock, TimerHandle } from '../../supervisors/clock.js';
import type { Random } from '../../supervisors/random.js';

export function schedulePeriodic(clock: Clock, random: Random, intervalMs: () => number, task: () => void): () => void {
  let stopped = false;
  let timer: TimerHandle;
  const run = () => {
    if (stopped) return;
    task();
    if (!stopped) timer = clock.setTimeout(run, intervalMs());
  };
  timer = clock.setTimeout(run, random.next() * intervalMs());
  return () => {
    stopped = true;
    clock.clearTimeout(timer);
  };
}
