/**
 * Lifeguard's local health (LHA-Probe): a score from 0 (healthy) to
 * awareness_max_multiplier − 1. Missed acks and nacks, refuting an accusation
 * of ourselves and a late event loop raise it; each successful probe lowers
 * it. Probe intervals and deadlines are multiplied by score + 1, so a node
 * that cannot keep up slows its own probing instead of accusing healthy
 * peers of its own slowness.
 */

export function nextHealthScore(score: number, delta: number, maxMultiplier: number): number {
  return Math.min(Math.max(0, score + delta), Math.max(0, maxMultiplier - 1));
}

export function scaleByHealth(timeoutMs: number, score: number): number {
  return timeoutMs * (score + 1);
}

export interface Awareness {
  readonly score: number;
  apply(delta: number): void;
  scale(timeoutMs: number): number;
}

export function createAwareness(maxMultiplier: number): Awareness {
  let score = 0;
  return {
    get score() {
      return score;
    },
    apply(delta) {
      score = nextHealthScore(score, delta, maxMultiplier);
    },
    scale: (timeoutMs) => scaleByHealth(timeoutMs, score),
  };
}
