import { MAX_TIMER_MS } from '../../supervisors/index.js';

/**
 * Settles when `work` does or after `ms`, whichever comes first, with true
 * when `work` finished in time; never rejects. The deadline stays ref'd: the
 * stop sequence after it (the `stopped` line) must run even when nothing
 * else keeps the process alive.
 */
export function within(ms: number, work: Promise<unknown>): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), Math.min(Math.max(0, ms), MAX_TIMER_MS));
  });
  const done = work.then(
    () => true,
    () => true,
  );
  return Promise.race([done, deadline]).finally(() => clearTimeout(timer));
}
