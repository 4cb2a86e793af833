/**
 * `cpu_quota_per_agent`: how much execution time one agent may use. A quota
 * of 100m is 100 ms of execution per second, averaged over a sliding window
 * of `CPU_QUOTA_WINDOW_MS`.
 *
 * A token bucket in nanoseconds: it holds at most `quota × window` (the
 * window's worth, so an agent idle for a second may use its 100 ms at once)
 * and refills at the quota's rate. An execution is charged after it ran,
 * since its length is only known then; the charge may take the bucket below
 * zero, and the agent waits until it is positive again. Carrying the overshoot
 * as debt is what holds a long-running agent to its quota on average: with a
 * plain sum over the last second, an agent whose executions take 500 ms
 * would run 500 ms in every 1.5 s, a third of a core.
 *
 * Pure and O(1): time comes in as an argument (the dispatcher's clock).
 */

/** The sliding window of the quota: the spec's "100m over 1 s". */
export const CPU_QUOTA_WINDOW_MS = 1_000;

const NS_PER_MS = 1_000_000;

export interface CpuBudget {
  /** Records `ns` of execution that ended at `nowMs`. */
  charge(nowMs: number, ns: number): void;
  /** When the agent may run again: `nowMs` itself when it may run now. */
  readyAt(nowMs: number): number;
  /** Execution charged since creation, ns. */
  readonly usedNs: number;
}

/** No quota (`cpu_quota_per_agent = 0`, or a whole core or more, which one execution at a time cannot exceed). */
class Unlimited implements CpuBudget {
  usedNs = 0;

  charge(_nowMs: number, ns: number): void {
    this.usedNs += ns;
  }

  readyAt(nowMs: number): number {
    return nowMs;
  }
}

/** A class: one per agent, ten thousand per instance. */
class TokenBucket implements CpuBudget {
  usedNs = 0;
  private tokensNs: number;
  private lastMs: number;

  constructor(
    /** Nanoseconds of execution earned per millisecond of time (= millicores × 1000). */
    private readonly rateNsPerMs: number,
    private readonly capacityNs: number,
    nowMs: number,
  ) {
    this.tokensNs = capacityNs;
    this.lastMs = nowMs;
  }

  charge(nowMs: number, ns: number): void {
    this.refill(nowMs);
    this.tokensNs -= ns;
    this.usedNs += ns;
  }

  readyAt(nowMs: number): number {
    this.refill(nowMs);
    if (this.tokensNs > 0) return nowMs;
    // Strictly positive afterwards, so a wake-up at that time finds the agent ready.
    return nowMs + Math.floor(-this.tokensNs / this.rateNsPerMs) + 1;
  }

  private refill(nowMs: number): void {
    if (nowMs <= this.lastMs) return;
    this.tokensNs = Math.min(this.capacityNs, this.tokensNs + (nowMs - this.lastMs) * this.rateNsPerMs);
    this.lastMs = nowMs;
  }
}

/** A budget of `millicores` (100 = a tenth of a core) over `windowMs`. */
export function createCpuBudget(millicores: number, nowMs: number, windowMs = CPU_QUOTA_WINDOW_MS): CpuBudget {
  if (!(millicores > 0) || millicores >= 1000) return new Unlimited();
  const rateNsPerMs = (millicores / 1000) * NS_PER_MS;
  return new TokenBucket(rateNsPerMs, rateNsPerMs * windowMs, nowMs);
}
