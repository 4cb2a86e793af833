/**
 * The majority rule of failover (docs/cluster.md, "When the network
 * splits"), a pure function of the member table as one node sees it. The
 * last known members are all but those that left gracefully; a member is
 * seen while alive or suspect (suspicion is not yet a verdict).
 *
 * - `majority` (strictly more than half seen): this side fails over the
 *   agents of dead members;
 * - `half`: keeps its own agents, fails over nothing (of two halves neither
 *   may, or both would run the same agents);
 * - `minority`: fails over nothing, and stops its own agents once this has
 *   lasted longer than the suspicion timeout (the majority side will have
 *   started them by then).
 */
import type { MemberState } from './member.js';

export type QuorumVerdict = 'majority' | 'half' | 'minority';

export interface Quorum {
  readonly seen: number;
  readonly known: number;
  readonly verdict: QuorumVerdict;
}

export function quorumOf(members: ReadonlyArray<{ readonly state: MemberState }>): Quorum {
  let seen = 0;
  let known = 0;
  for (const member of members) {
    if (member.state === 'left') continue;
    known += 1;
    if (member.state === 'alive' || member.state === 'suspect') seen += 1;
  }
  const verdict: QuorumVerdict = 2 * seen > known ? 'majority' : 2 * seen === known ? 'half' : 'minority';
  return { seen, known, verdict };
}
