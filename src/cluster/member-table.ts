/**
 * This node's view of the cluster, itself included: one record per node id,
 * and a change event whenever a member's state or addresses change (the
 * server logs each: `node_id`, `from`, `to`, `reason`).
 */
import { MEMBER_STATES, publicMember, sameAddresses, type Member, type MemberRecord, type MemberState } from './member.js';
import type { ChangeReason } from './state-decisions.js';

export type Presence = MemberState | 'none';

export interface MemberChange {
  readonly node_id: string;
  /** `none`: first heard of. */
  readonly from: Presence;
  /** `none`: forgotten (dead for longer than reconnect_timeout). */
  readonly to: Presence;
  readonly reason: ChangeReason | 'forgotten';
  readonly incarnation: number;
  /** The member whose message caused the change (the accuser of a suspicion, the node itself for a leave). */
  readonly by?: string;
  readonly member: Member;
}

export type MemberCounts = Record<MemberState, number>;

export interface MemberTable {
  get(nodeId: string): MemberRecord | undefined;
  /** Stores `record`; announces the change when its state or addresses differ from the held one. */
  set(record: MemberRecord, reason: ChangeReason, by?: string): void;
  /** Forgets a member, announcing `to: none`. */
  forget(nodeId: string): void;
  /** Every record; the same array until the table changes, so callers must not modify it. */
  all(): readonly MemberRecord[];
  /** Members in `states` (default: alive and suspect, the ones counted in the protocol's formulas). */
  count(states?: readonly MemberState[]): number;
  counts(): MemberCounts;
  onChange(listener: (change: MemberChange) => void): () => void;
}

const LIVE: readonly MemberState[] = ['alive', 'suspect'];

export function createMemberTable(): MemberTable {
  const members = new Map<string, MemberRecord>();
  const listeners = new Set<(change: MemberChange) => void>();
  const tally: MemberCounts = { alive: 0, suspect: 0, dead: 0, left: 0 };
  // Gossip rounds read the whole table several times a second; it changes far less often.
  let snapshot: MemberRecord[] | undefined;

  function emit(change: MemberChange): void {
    for (const listener of [...listeners]) listener(change);
  }

  return {
    get: (nodeId) => members.get(nodeId),
    set(record, reason, by) {
      const old = members.get(record.node_id);
      members.set(record.node_id, record);
      snapshot = undefined;
      if (old) tally[old.state] -= 1;
      tally[record.state] += 1;
      if (old && old.state === record.state && sameAddresses(old, record)) return;
      emit({
        node_id: record.node_id,
        from: old?.state ?? 'none',
        to: record.state,
        reason,
        incarnation: record.incarnation,
        ...(by === undefined ? {} : { by }),
        member: publicMember(record),
      });
    },
    forget(nodeId) {
      const old = members.get(nodeId);
      if (!old) return;
      members.delete(nodeId);
      snapshot = undefined;
      tally[old.state] -= 1;
      emit({ node_id: nodeId, from: old.state, to: 'none', reason: 'forgotten', incarnation: old.incarnation, member: publicMember(old) });
    },
    all: () => (snapshot ??= [...members.values()]),
    count(states = LIVE) {
      return states.reduce((sum, state) => sum + tally[state], 0);
    },
    counts: () => Object.fromEntries(MEMBER_STATES.map((state) => [state, tally[state]])) as MemberCounts,
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
