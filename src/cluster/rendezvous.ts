/**
 * Rendezvous (highest random weight) hashing: every node computes the same
 * winner for a key from the same candidates, with no coordination, and a
 * candidate that goes away moves only the keys it won.
 */
import { createHash } from 'node:crypto';

function weight(key: string, nodeId: string): string {
  return createHash('sha256').update(key).update('\n').update(nodeId).digest('hex');
}

/** The candidates ordered by their weight for `key`, highest first. */
export function rendezvousRank(key: string, candidates: readonly string[]): string[] {
  return [...new Set(candidates)]
    .map((id) => ({ id, w: weight(key, id) }))
    .sort((a, b) => (a.w < b.w ? 1 : a.w > b.w ? -1 : 0))
    .map((c) => c.id);
}

/** The candidate that wins `key`; undefined when there is none. */
export function rendezvousWinner(key: string, candidates: readonly string[]): string | undefined {
  return rendezvousRank(key, candidates)[0];
}
