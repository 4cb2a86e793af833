/**
 * The formulas the SWIM parameters feed, after hashicorp/memberlist
 * (`util.go`, `state.go`). `n` is the number of members this node counts
 * (itself included). docs/cluster.md gives each with its default.
 */

/** Base suspicion timeout: suspicion_mult × max(1, log10 n) × probe_interval. */
export function suspicionTimeoutMs(suspicionMult: number, n: number, probeIntervalMs: number): number {
  const nodeScale = Math.max(1, Math.log10(Math.max(1, n)));
  return Math.round(suspicionMult * nodeScale * probeIntervalMs);
}

/**
 * Independent confirmations that bring a suspicion down to the base timeout:
 * suspicion_mult − 2, so the nominal timeout is met two probe intervals
 * early; 0 (no shortening, base timeout at once) when the cluster has fewer
 * other members than that to confirm.
 */
export function expectedConfirmations(suspicionMult: number, n: number): number {
  const k = suspicionMult - 2;
  return n - 2 < k ? 0 : Math.max(0, k);
}

/**
 * Lifeguard's shrinking suspicion (LHA-Suspicion): from `maxMs` with no
 * confirmation down to `minMs` with `k`, logarithmically in the count; the
 * time left after `elapsedMs`.
 */
export function remainingSuspicionMs(confirmations: number, k: number, elapsedMs: number, minMs: number, maxMs: number): number {
  if (k < 1) return minMs - elapsedMs;
  const fraction = Math.log(confirmations + 1) / Math.log(k + 1);
  const timeout = Math.max(minMs, Math.floor(maxMs - fraction * (maxMs - minMs)));
  return timeout - elapsedMs;
}

/** Times each gossip message is sent before it is dropped: retransmit_mult × ceil(log10(n + 1)). */
export function retransmitLimit(retransmitMult: number, n: number): number {
  return retransmitMult * Math.ceil(Math.log10(n + 1));
}

/** Clusters up to this size push-pull at the configured interval; larger ones back off. */
export const PUSH_PULL_SCALE_THRESHOLD = 32;

/** push_pull_interval, times ceil(log2 n − log2 32) + 1 above 32 members, so full-state exchanges do not saturate the network. */
export function pushPullIntervalMs(intervalMs: number, n: number): number {
  if (n <= PUSH_PULL_SCALE_THRESHOLD) return intervalMs;
  return intervalMs * (Math.ceil(Math.log2(n) - Math.log2(PUSH_PULL_SCALE_THRESHOLD)) + 1);
}
