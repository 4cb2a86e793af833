/**
 * What a gossip message about a member does to this node's table: pure
 * decisions after memberlist's `aliveNode`, `suspectNode` and `deadNode`,
 * guarded by incarnation numbers. A stale message changes nothing; an
 * accusation of this node is refuted with a higher incarnation.
 *
 * Beyond memberlist: a stale `alive` about a member held suspect, dead or
 * left answers with the accusation we hold (`reaccuse`, after memberlist PR
 * #345). A node restarted with a low incarnation otherwise never hears the
 * accusation it must refute and stays dead in the views that hold it. In the
 * other direction, a stale accusation of ourselves is answered with our
 * current alive (`assert`): its sender missed our refutation, and would
 * otherwise declare us dead when its suspicion runs out.
 */
import { sameAddresses, type MemberRecord, type MemberState, type NodeAddresses } from './member.js';
import type { Accusation, AliveMessage } from './gossip-messages.js';

export interface SelfView {
  readonly node_id: string;
  readonly incarnation: number;
  readonly addresses: NodeAddresses;
  /** Set by a graceful leave: from then on nothing about ourselves is refuted. */
  readonly leaving: boolean;
}

/** Why a member changed state; the server logs it with the change. */
export type ChangeReason =
  | 'joined'
  | 'refuted'
  | 'rejoined'
  | 'address_changed'
  | 'incarnation'
  | 'suspected'
  | 'suspicion_timeout'
  | 'declared_dead'
  | 'left';

export type AccusationKind = 'suspect' | 'dead';

export type Decision =
  | { readonly action: 'ignore'; readonly why: 'stale' | 'current' | 'unknown' | 'leaving' | 'not_alive' }
  /** We are accused (or someone speaks for us with other data): broadcast alive above `accused`. */
  | { readonly action: 'refute'; readonly accused: number }
  /** Store `member` and re-gossip the message. */
  | { readonly action: 'set'; readonly member: MemberRecord; readonly reason: ChangeReason }
  /** Add a confirmation to the running suspicion of the member. */
  | { readonly action: 'confirm' }
  /**
   * We are accused at an incarnation we already refuted: the accuser missed
   * the refutation (gossip is lossy), so tell it directly.
   */
  | { readonly action: 'assert'; readonly to: string }
  /** Re-gossip what we hold against the member, and send it to the address that spoke for it. */
  | { readonly action: 'reaccuse'; readonly kind: AccusationKind; readonly accusation: Accusation; readonly to: string };

const IGNORE_STALE: Decision = { action: 'ignore', why: 'stale' };

function refuteUnlessStale(self: SelfView, accusation: Accusation): Decision {
  if (self.leaving) return { action: 'ignore', why: 'leaving' };
  if (accusation.incarnation < self.incarnation) return accusation.from === self.node_id ? IGNORE_STALE : { action: 'assert', to: accusation.from };
  return { action: 'refute', accused: accusation.incarnation };
}

/** The accusation a stale `alive` is answered with, from what we hold about the member. */
function heldAccusation(current: MemberRecord, self: SelfView): { kind: AccusationKind; accusation: Accusation } {
  const kind: AccusationKind = current.state === 'suspect' ? 'suspect' : 'dead';
  // A left member is answered with its own leave, so it reads "left", not "dead", wherever it lands.
  const from = current.state === 'left' ? current.node_id : self.node_id;
  return { kind, accusation: { node_id: current.node_id, incarnation: current.incarnation, from } };
}

const ALIVE_REASON: Record<MemberState, ChangeReason> = { alive: 'incarnation', suspect: 'refuted', dead: 'rejoined', left: 'rejoined' };

function aliveRecord(message: AliveMessage, changed_at: number): MemberRecord {
  return {
    node_id: message.node_id,
    address: message.address,
    grpc_address: message.grpc_address,
    http_address: message.http_address,
    state: 'alive',
    incarnation: message.incarnation,
    changed_at,
  };
}

export function decideAlive(current: MemberRecord | undefined, message: AliveMessage, self: SelfView, now: number): Decision {
  if (message.node_id === self.node_id) {
    if (self.leaving) return { action: 'ignore', why: 'leaving' };
    if (message.incarnation < self.incarnation) return IGNORE_STALE;
    if (message.incarnation === self.incarnation && sameAddresses(message, self.addresses)) return { action: 'ignore', why: 'current' };
    return { action: 'refute', accused: message.incarnation };
  }
  if (current === undefined) return { action: 'set', member: aliveRecord(message, now), reason: 'joined' };
  if (message.incarnation <= current.incarnation) {
    if (current.state === 'alive') return IGNORE_STALE;
    return { action: 'reaccuse', ...heldAccusation(current, self), to: message.address };
  }
  if (current.state === 'alive') {
    const reason = sameAddresses(message, current) ? 'incarnation' : 'address_changed';
    return { action: 'set', member: aliveRecord(message, current.changed_at), reason };
  }
  return { action: 'set', member: aliveRecord(message, now), reason: ALIVE_REASON[current.state] };
}

export function decideSuspect(current: MemberRecord | undefined, message: Accusation, self: SelfView, now: number): Decision {
  if (message.node_id === self.node_id) return refuteUnlessStale(self, message);
  if (current === undefined) return { action: 'ignore', why: 'unknown' };
  if (message.incarnation < current.incarnation) return IGNORE_STALE;
  if (current.state === 'suspect') return { action: 'confirm' };
  if (current.state !== 'alive') return { action: 'ignore', why: 'not_alive' };
  return { action: 'set', member: { ...current, state: 'suspect', incarnation: message.incarnation, changed_at: now }, reason: 'suspected' };
}

export function decideDead(current: MemberRecord | undefined, message: Accusation, self: SelfView, now: number, reason: ChangeReason = 'declared_dead'): Decision {
  if (message.node_id === self.node_id) return refuteUnlessStale(self, message);
  if (current === undefined) return { action: 'ignore', why: 'unknown' };
  if (message.incarnation < current.incarnation) return IGNORE_STALE;
  if (current.state === 'dead' || current.state === 'left') return { action: 'ignore', why: 'not_alive' };
  const left = message.from === message.node_id;
  return {
    action: 'set',
    member: { ...current, state: left ? 'left' : 'dead', incarnation: message.incarnation, changed_at: now },
    reason: left ? 'left' : reason,
  };
}

/** The incarnation a refutation takes: past both our own and the one we are accused at. */
export function refutingIncarnation(own: number, accused: number): number {
  return Math.max(own, accused) + 1;
}
