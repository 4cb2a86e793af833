/**
 * Carries out the pure decisions of state-decisions.ts on this node: stores
 * members, re-gossips what changed, runs the suspicion timers, refutes
 * accusations of ourselves and answers stale `alive` messages with the
 * accusation held.
 */
import type { Clock } from '../../supervisors/clock.js';
import type { Awareness } from './awareness.js';
import type { BroadcastQueue } from './broadcast-queue.js';
import { expectedConfirmations, suspicionTimeoutMs } from './formulas.js';
import { encodeMessage } from './gossip-codec.js';
import type { Accusation, AliveMessage, GossipMessage, MemberSnapshot } from './gossip-messages.js';
import type { NodeAddresses } from './member.js';
import type { MemberTable } from './member-table.js';
import { createSuspicion, type Suspicion } from './suspicion.js';
import { decideAlive, decideDead, decideSuspect, refutingIncarnation, type ChangeReason, type Decision, type SelfView } from './state-decisions.js';

/** The messages about one member, gossiped under its id. */
type MemberMessage = Extract<GossipMessage, { kind: 'alive' | 'suspect' | 'dead' }>;

export interface MembershipStateOptions {
  readonly nodeId: string;
  readonly addresses: NodeAddresses;
  readonly clock: Clock;
  readonly table: MemberTable;
  readonly queue: BroadcastQueue;
  readonly awareness: Awareness;
  readonly settings: {
    readonly probe_interval: number;
    readonly gossip_interval: number;
    readonly suspicion_mult: number;
    readonly suspicion_max_timeout_mult: number;
  };
  /** Sends one message to an address at once (the answer to a stale alive). */
  readonly sendDirect: (address: string, message: GossipMessage) => void;
}

export interface MembershipState {
  readonly self: SelfView;
  selfAlive(): AliveMessage;
  alive(message: AliveMessage): void;
  suspect(message: Accusation): void;
  dead(message: Accusation, reason?: ChangeReason): void;
  /** A push-pull's table: alive as alive, left as a leave, dead or suspect as our own suspicion. */
  merge(members: readonly MemberSnapshot[]): void;
  /** Queues our alive message, as at start. */
  announce(): void;
  /** Stops refuting, and queues our leave; `onSent` runs once it has been sent its last time. */
  leave(onSent: () => void): Accusation;
  stop(): void;
}

export function createMembershipState(options: MembershipStateOptions): MembershipState {
  const { nodeId, clock, table, queue, awareness, settings } = options;
  let incarnation = 0;
  let leaving = false;
  const suspicions = new Map<string, Suspicion>();
  // Every copy of a stale message in flight would otherwise draw its own answer.
  const lastAnswered = new Map<string, number>();
  const answerDue = (key: string) => {
    const last = lastAnswered.get(key);
    if (last !== undefined && clock.now() - last < settings.gossip_interval) return false;
    lastAnswered.set(key, clock.now());
    return true;
  };

  const selfView = (): SelfView => ({ node_id: nodeId, incarnation, addresses: options.addresses, leaving });
  const selfAlive = (): AliveMessage => ({ node_id: nodeId, incarnation, ...options.addresses });
  const broadcast = (message: MemberMessage, onDone?: () => void) => queue.push(message.node_id, encodeMessage(message), onDone);

  function storeSelf(): void {
    table.set({ ...selfAlive(), state: 'alive', changed_at: clock.now() }, 'joined');
  }

  function refute(accused: number): void {
    incarnation = refutingIncarnation(incarnation, accused);
    // Being accused is a sign our own messages are late: Lifeguard counts it against our health.
    awareness.apply(1);
    storeSelf();
    broadcast({ kind: 'alive', ...selfAlive() });
  }

  function cancelSuspicion(id: string): void {
    suspicions.get(id)?.cancel();
    suspicions.delete(id);
  }

  function startSuspicion(id: string, from: string, changedAt: number): void {
    const n = table.count();
    const minMs = suspicionTimeoutMs(settings.suspicion_mult, n, settings.probe_interval);
    const suspicion = createSuspicion({
      clock,
      from,
      k: expectedConfirmations(settings.suspicion_mult, n),
      minMs,
      maxMs: settings.suspicion_max_timeout_mult * minMs,
      onTimeout: () => {
        suspicions.delete(id);
        const current = table.get(id);
        if (current?.state !== 'suspect' || current.changed_at !== changedAt) return;
        apply(decideDead(current, { node_id: id, incarnation: current.incarnation, from: nodeId }, selfView(), clock.now(), 'suspicion_timeout'), {
          kind: 'dead',
          node_id: id,
          incarnation: current.incarnation,
          from: nodeId,
        }, nodeId);
      },
    });
    suspicions.set(id, suspicion);
  }

  function reaccuse(decision: Extract<Decision, { action: 'reaccuse' }>): void {
    if (!answerDue(`reaccuse ${decision.accusation.node_id}`)) return;
    const message: MemberMessage = { kind: decision.kind, ...decision.accusation };
    broadcast(message);
    options.sendDirect(decision.to, message);
  }

  function apply(decision: Decision, message: MemberMessage, by?: string): void {
    switch (decision.action) {
      case 'ignore':
        return;
      case 'refute':
        refute(decision.accused);
        return;
      case 'confirm':
        if (message.kind === 'suspect' && suspicions.get(message.node_id)?.confirm(message.from)) broadcast(message);
        return;
      case 'reaccuse':
        reaccuse(decision);
        return;
      case 'assert': {
        const accuser = table.get(decision.to);
        if (accuser && answerDue(`assert ${decision.to}`)) options.sendDirect(accuser.address, { kind: 'alive', ...selfAlive() });
        return;
      }
      case 'set': {
        const { member } = decision;
        table.set(member, decision.reason, by);
        broadcast(message);
        if (member.state === 'suspect') startSuspicion(member.node_id, by ?? nodeId, member.changed_at);
        else cancelSuspicion(member.node_id);
        if (member.state === 'alive') lastAnswered.delete(`reaccuse ${member.node_id}`);
      }
    }
  }

  const onAlive = (message: AliveMessage) =>
    apply(decideAlive(table.get(message.node_id), message, selfView(), clock.now()), { kind: 'alive', ...message });
  const onSuspect = (message: Accusation) =>
    apply(decideSuspect(table.get(message.node_id), message, selfView(), clock.now()), { kind: 'suspect', ...message }, message.from);
  const onDead = (message: Accusation, reason?: ChangeReason) =>
    apply(decideDead(table.get(message.node_id), message, selfView(), clock.now(), reason), { kind: 'dead', ...message }, message.from);

  storeSelf();

  return {
    get self() {
      return selfView();
    },
    selfAlive,
    alive: onAlive,
    suspect: onSuspect,
    dead: onDead,
    merge(members) {
      for (const { state, ...alive } of members) {
        if (state === 'alive') onAlive(alive);
        else if (state === 'left') onDead({ node_id: alive.node_id, incarnation: alive.incarnation, from: alive.node_id });
        else onSuspect({ node_id: alive.node_id, incarnation: alive.incarnation, from: nodeId });
      }
    },
    announce() {
      broadcast({ kind: 'alive', ...selfAlive() });
    },
    leave(onSent) {
      leaving = true;
      incarnation += 1;
      const message: Accusation = { node_id: nodeId, incarnation, from: nodeId };
      table.set({ ...selfAlive(), state: 'left', changed_at: clock.now() }, 'left', nodeId);
      broadcast({ kind: 'dead', ...message }, onSent);
      return message;
    },
    stop() {
      for (const suspicion of suspicions.values()) suspicion.cancel();
      suspicions.clear();
    },
  };
}
