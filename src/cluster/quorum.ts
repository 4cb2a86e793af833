/**
 * The majority rule of failover (docs/cluster.md, "When the network
 * splits"), a pure function of the member table as one node sees it. The
 * last known members are all but those that left gracefully; a member is
 * seen only while alive. A suspect member does not count: a side cut from
 * the rest suspects all of it before it declares any dead, and counting the
 * suspects would let it see a passing majority while it declares them dead
 * one at a time, and fail some of them over.
 *
 * - `majority` (strictly more than half seen): this side fails over the
 *   agents of dead members;
 * - `half`: keeps its own agents, fails over nothing (of two halves neither
 *   may, or both would run the same agents);
 * - `minority`: fails over nothing, and stops its own agents once this has
 *   lasted longer than the suspicion timeout (the majority side will have
 *   started them by then).
 */
import type { Member, MemberState } from './member.js';

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
    if (member.state === 'alive') seen += 1;
  }
  const verdict: QuorumVerdict = 2 * seen > known ? 'majority' : 2 * seen === known ? 'half' : 'minority';
  return { seen, known, verdict };
}

/**
 * Whether a strict majority of the last known members answers this node
 * now: itself and each alive member it reaches directly. A member table can
 * show a passing majority on a side that is cut off (a member it has not
 * probed yet still shows alive there), so a failover asks before it starts
 * anything.
 */
export async function majorityAnswers(nodeId: string, members: readonly Member[], reach: (nodeId: string) => Promise<boolean>): Promise<boolean> {
  const known = members.filter((m) => m.state !== 'left').length;
  const asked = members.filter((m) => m.node_id !== nodeId && m.state === 'alive');
  const answers = await Promise.all(asked.map((m) => reach(m.node_id).catch(() => false)));
  const answered = 1 + answers.filter(Boolean).length;
  return 2 * answered > known;
}
