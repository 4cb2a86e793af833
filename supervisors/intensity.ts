/**
 * Restart intensity, OTP's guard against a child that dies for the same
 * reason every time it starts: if more than `maxRestarts` restarts happen
 * within `periodMs`, restarting stops. Who stops is the supervisor's scope
 * (supervisor.ts): the whole supervisor, as in OTP, or only that child.
 *
 * A restart at time t is within the window at `now` while now - t < periodMs.
 */

export interface Intensity {
  /** Restarts tolerated within `periodMs`; 0 means none. */
  readonly maxRestarts: number;
  readonly periodMs: number;
}

/**
 * Five restarts tolerate a child that crashes now and then; a child crashing
 * on every start is caught after about 3 s of backoff (0.1 + 0.2 + 0.4 + 0.8
 * + 1.6 s).
 */
export const DEFAULT_MAX_RESTARTS = 5;
/**
 * Long enough that a child which fails only at its startup timeout is still
 * caught: its six failed starts span 5 × 10 s (`agent_startup_timeout`) plus
 * at most 3.72 s of jittered backoff, about 54 s < 60 s.
 */
export const DEFAULT_PERIOD_MS = 60_000;

export const DEFAULT_INTENSITY: Intensity = { maxRestarts: DEFAULT_MAX_RESTARTS, periodMs: DEFAULT_PERIOD_MS };

export function resolveIntensity(options: Partial<Intensity> = {}): Intensity {
  const resolved = { ...DEFAULT_INTENSITY, ...options };
  if (!(Number.isInteger(resolved.maxRestarts) && resolved.maxRestarts >= 0)) {
    throw new RangeError(`intensity: maxRestarts must be an integer >= 0, got ${resolved.maxRestarts}`);
  }
  if (!(Number.isFinite(resolved.periodMs) && resolved.periodMs > 0)) {
    throw new RangeError(`intensity: periodMs must be finite and > 0, got ${resolved.periodMs}`);
  }
  return resolved;
}

/**
 * Records a restart at `now` in `history` (ascending times, updated in place)
 * and returns how many restarts, this one included, are within the window.
 * Older entries are dropped, and so is anything beyond `maxRestarts + 1`
 * entries, which cannot change a verdict: memory per child stays bounded.
 */
export function recordRestart(history: number[], now: number, intensity: Intensity): number {
  const cutoff = now - intensity.periodMs;
  let drop = 0;
  while (drop < history.length && history[drop]! <= cutoff) drop += 1;
  history.push(now);
  drop = Math.max(drop, history.length - (intensity.maxRestarts + 1));
  if (drop > 0) history.splice(0, drop);
  return history.length;
}

/** Whether `restarts` within the window is more than the intensity allows. */
export function exceedsIntensity(restarts: number, intensity: Intensity): boolean {
  return restarts > intensity.maxRestarts;
}
