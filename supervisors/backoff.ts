/**
 * The wait between a crash and the restart. OTP restarts at once; we wait,
 * growing exponentially, because an agent that crashes on every start would
 * otherwise spin a worker thread, and because thousands of agents that lose
 * their worker together must not all come back in the same instant.
 *
 * The n-th restart of a child within its intensity period (intensity.ts)
 * waits
 *
 *     base(n) = min(maxMs, initialMs × multiplier^(n-1))
 *     delay(n) = round(base(n) × (1 + jitter × (2r - 1)))      r from Random, in [0, 1)
 *
 * so the delay lies within base(n) × (1 ± jitter). A child quiet for a whole
 * period starts again from `initialMs`.
 */
import type { Random } from './random.js';

/**
 * A restart costs little (instantiating a cached module takes 17–27 µs), so
 * the first retry comes quickly: a one-off crash costs an agent about a tenth
 * of a second, and a crash loop runs at most ten starts a second.
 */
export const INITIAL_BACKOFF_MS = 100;
/** Doubling reaches a calm pace within a few restarts: 0.1, 0.2, 0.4, 0.8, 1.6 s. */
export const BACKOFF_MULTIPLIER = 2;
/**
 * Beyond half a minute a child looks dead to an operator; with larger
 * intensities the wait stops growing here.
 */
export const MAX_BACKOFF_MS = 30_000;
/**
 * ±20 % spreads agents that crashed together (a watchdog kills a worker and
 * every agent on it) so their restarts do not arrive in one burst.
 */
export const BACKOFF_JITTER = 0.2;

export interface BackoffOptions {
  readonly initialMs: number;
  readonly multiplier: number;
  readonly maxMs: number;
  /** Fraction in [0, 1). */
  readonly jitter: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = {
  initialMs: INITIAL_BACKOFF_MS,
  multiplier: BACKOFF_MULTIPLIER,
  maxMs: MAX_BACKOFF_MS,
  jitter: BACKOFF_JITTER,
};

/** Defaults filled in; nonsense rejected as the programming error it is. */
export function resolveBackoff(options: Partial<BackoffOptions> = {}): BackoffOptions {
  const resolved = { ...DEFAULT_BACKOFF, ...options };
  const { initialMs, multiplier, maxMs, jitter } = resolved;
  if (!(Number.isFinite(initialMs) && initialMs >= 0)) throw new RangeError(`backoff: initialMs must be finite and >= 0, got ${initialMs}`);
  if (!(Number.isFinite(multiplier) && multiplier >= 1)) throw new RangeError(`backoff: multiplier must be finite and >= 1, got ${multiplier}`);
  if (!(Number.isFinite(maxMs) && maxMs >= initialMs)) throw new RangeError(`backoff: maxMs must be finite and >= initialMs, got ${maxMs}`);
  if (!(jitter >= 0 && jitter < 1)) throw new RangeError(`backoff: jitter must be in [0, 1), got ${jitter}`);
  return resolved;
}

/** The delay before restart number `attempt` (1-based) without jitter. */
export function baseBackoff(attempt: number, options: BackoffOptions): number {
  if (!(Number.isInteger(attempt) && attempt >= 1)) throw new RangeError(`backoff: attempt must be an integer >= 1, got ${attempt}`);
  // multiplier^(attempt-1) may overflow to Infinity; min() then yields maxMs.
  return Math.min(options.maxMs, options.initialMs * options.multiplier ** (attempt - 1));
}

/** The delay before restart number `attempt` (1-based), jittered with one draw from `random`. */
export function backoffDelay(attempt: number, options: BackoffOptions, random: Random): number {
  const base = baseBackoff(attempt, options);
  if (options.jitter === 0) return Math.round(base);
  return Math.round(base * (1 + options.jitter * (2 * random.next() - 1)));
}
