/**
 * Randomness as a seam: backoff jitter reads it, so a test fixes it and then
 * checks exact restart delays.
 */
export interface Random {
  /** A number in [0, 1). */
  next(): number;
}

export const mathRandom: Random = { next: () => Math.random() };

/**
 * Returns `values` in turn, cycling. With 0.5 every jitter is zero and delays
 * are the bare backoff schedule.
 */
export function createFixedRandom(...values: number[]): Random {
  if (values.length === 0) throw new RangeError('createFixedRandom needs at least one value');
  for (const value of values) {
    if (!(value >= 0 && value < 1)) throw new RangeError(`createFixedRandom: ${value} is not in [0, 1)`);
  }
  let index = 0;
  return {
    next() {
      const value = values[index % values.length]!;
      index += 1;
      return value;
    },
  };
}
