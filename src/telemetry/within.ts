import type { Clock } from '../../supervisors/index.js';

/**
 * Settles when `work` does or `ms` later on `clock`, whichever comes first,
 * with true when `work` finished in time; never rejects. The stop sequence
 * uses it to bound what a collector that does not answer can hold up.
 */
export function within(clock: Clock, ms: number, work: Promise<unknown>): Promise<boolean> {
  return new Promise((resolve) => {
    const deadline = clock.setTimeout(() => resolve(false), Math.max(0, ms));
    const done = (): void => {
      clock.clearTimeout(deadline);
      resolve(true);
    };
    work.then(done, done);
  });
}
