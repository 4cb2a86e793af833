/**
 * Waiting for an event rather than for time: a test collector or a log
 * capture calls each of its `arrivals` when something arrives, and a test
 * waits until what it expects is there.
 */

/**
 * Resolves when `check` gives a value, asked now and at each `arrival`;
 * rejects after `timeoutMs` (a bound on a failing test, not a wait).
 */
export function whenArrived<T>(arrivals: Set<() => void>, check: () => T | undefined, what: string, timeoutMs: number): Promise<T> {
  const now = check();
  if (now !== undefined) return Promise.resolve(now);
  return new Promise((resolve, reject) => {
    const arrival = (): void => {
      const value = check();
      if (value === undefined) return;
      clearTimeout(timer);
      arrivals.delete(arrival);
      resolve(value);
    };
    const timer = setTimeout(() => {
      arrivals.delete(arrival);
      reject(new Error(`expected ${what} within ${timeoutMs} ms`));
    }, timeoutMs);
    arrivals.add(arrival);
  });
}
