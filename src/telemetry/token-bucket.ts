/**
 * A token bucket over caller-given time: `capacity` tokens at most, refilled
 * at `refillPerSecond`. Pure arithmetic, so a test steps time by hand.
 */
export interface TokenBucket {
  /** Takes one token at time `nowMs` if there is one. */
  take(nowMs: number): boolean;
  /** Tokens available at `nowMs` (fractional). */
  available(nowMs: number): number;
}

export function createTokenBucket(capacity: number, refillPerSecond: number, nowMs: number): TokenBucket {
  if (!(capacity >= 1) || !(refillPerSecond > 0)) throw new RangeError(`token bucket needs capacity >= 1 and a positive rate, got ${capacity} and ${refillPerSecond}`);
  let tokens = capacity;
  let updated = nowMs;

  function refill(now: number): void {
    // A clock that steps back (it should not) refills nothing rather than draining the bucket.
    if (now > updated) {
      tokens = Math.min(capacity, tokens + ((now - updated) / 1000) * refillPerSecond);
      updated = now;
    }
  }

  return {
    take(now) {
      refill(now);
      if (tokens < 1) return false;
      tokens -= 1;
      return true;
    },
    available(now) {
      refill(now);
      return tokens;
    },
  };
}
