/**
 * SWIM's failure detector with Lifeguard, one probe at a time: ping the next
 * member (round robin over a shuffled list); without an ack within
 * probe_timeout, ask indirect_checks others to ping it (with nacks) and try
 * TCP; without any ack by the end of the probe interval, suspect it. The
 * interval stretches with this node's health score, and the score moves with
 * each probe: down on an ack, up by the nacks that did not come (or by one
 * when no helper could nack), since missing nacks point at our own network.
 *
 * A member that becomes suspect in our view is probed next, the suspicion
 * attached: a live one refutes to us directly if we missed its refutation,
 * a dead one fails our probe too, which is an independent confirmation.
 *
 * A probe whose deadline ran late by more than probe_timeout proves nothing
 * about the target: its ack may be waiting, unread, behind our own stalled
 * event loop. It counts against our health instead of the target.
 */
import type { Clock, TimerHandle } from '../../supervisors/clock.js';
import type { Random } from '../../supervisors/random.js';
import type { AckRegistry } from './ack-registry.js';
import type { Awareness } from './awareness.js';
import type { GossipSender } from './gossip-sender.js';
import type { GossipStats } from './gossip-stats.js';
import type { PingMessage } from './gossip-messages.js';
import type { LoopDelaySource } from './loop-delay.js';
import type { MemberRecord } from './member.js';
import type { MemberTable } from './member-table.js';
import type { MembershipState } from './membership-state.js';
import { pickRandom, randomInt, shuffle } from './seeded-random.js';

export interface ProberOptions {
  readonly nodeId: string;
  readonly address: string;
  readonly clock: Clock;
  readonly random: Random;
  readonly table: MemberTable;
  readonly state: MembershipState;
  readonly sender: GossipSender;
  readonly acks: AckRegistry;
  readonly awareness: Awareness;
  readonly loopDelay: LoopDelaySource;
  readonly stats: GossipStats;
  readonly settings: { readonly probe_interval: number; readonly probe_timeout: number; readonly indirect_checks: number };
  /** The TCP fallback: resolves true when the target acked over a stream within `timeoutMs`. */
  readonly tcpPing: (address: string, ping: PingMessage, timeoutMs: number) => Promise<boolean>;
}

export interface Prober {
  start(): void;
  stop(): void;
}

const probeable = (member: MemberRecord | undefined, self: string) => member !== undefined && member.node_id !== self && (member.state === 'alive' || member.state === 'suspect');

export function createProber(options: ProberOptions): Prober {
  const { nodeId, clock, random, table, state, sender, acks, awareness, settings, stats } = options;
  let order: string[] = [];
  // Members that became suspect in our view, probed before the round robin resumes; not the one our own probe just accused.
  const urgent: string[] = [];
  let accusing: string | undefined;
  let index = 0;
  let stopped = true;
  const timers = new Set<TimerHandle>();
  let unsubscribe: (() => void) | undefined;

  function after(ms: number, fn: () => void): void {
    const timer = clock.setTimeout(() => {
      timers.delete(timer);
      if (!stopped) fn();
    }, ms);
    timers.add(timer);
  }

  function nextTarget(): MemberRecord | undefined {
    for (let id = urgent.shift(); id !== undefined; id = urgent.shift()) {
      const member = table.get(id);
      if (member?.state === 'suspect') return member;
    }
    for (let checked = 0; checked <= order.length; checked++) {
      if (index >= order.length) {
        order = shuffle(random, table.all().filter((m) => probeable(m, nodeId)).map((m) => m.node_id));
        index = 0;
        if (order.length === 0) return undefined;
      }
      const member = table.get(order[index++] as string);
      if (probeable(member, nodeId)) return member;
    }
    return undefined;
  }

  function round(): void {
    // A late loop since the last round (GC, a busy core) is a sign of our own ill health.
    if (options.loopDelay.takeMaxDelayMs() > settings.probe_timeout) awareness.apply(1);
    const target = nextTarget();
    const interval = awareness.scale(settings.probe_interval);
    if (!target) {
      after(interval, round);
      return;
    }
    probe(target, interval);
  }

  function probe(target: MemberRecord, interval: number): void {
    stats.probes += 1;
    const seq = acks.nextSeq();
    const ping: PingMessage = { seq, target_id: target.node_id, source_id: nodeId, source_address: options.address };
    const deadline = clock.now() + interval;
    let acked = false;
    let nacks = 0;
    let expectedNacks = 0;
    acks.expect(seq, interval, { onAck: () => (acked = true), onNack: () => (nacks += 1) });
    // A suspect is told so with the ping, so it can refute at once (Lifeguard's buddy system).
    if (target.state === 'suspect') sender.send(target.address, { kind: 'ping', ...ping }, { kind: 'suspect', node_id: target.node_id, incarnation: target.incarnation, from: nodeId });
    else sender.send(target.address, { kind: 'ping', ...ping });

    after(settings.probe_timeout, () => {
      if (acked) return;
      const helpers = pickRandom(random, table.all(), settings.indirect_checks, (m) => m.state === 'alive' && m.node_id !== nodeId && m.node_id !== target.node_id);
      expectedNacks = helpers.length;
      for (const helper of helpers) {
        sender.send(helper.address, { kind: 'indirect_ping', ...ping, target_address: target.address, nack: true });
      }
      options.tcpPing(target.address, ping, Math.max(1, deadline - clock.now())).then(
        (ok) => (acked ||= ok),
        () => undefined,
      );
    });

    after(interval, () => {
      const lateBy = clock.now() - deadline;
      if (acked) awareness.apply(-1);
      else if (lateBy > settings.probe_timeout) awareness.apply(1);
      else {
        stats.probes_failed += 1;
        awareness.apply(expectedNacks > 0 ? Math.max(0, expectedNacks - nacks) : 1);
        accusing = target.node_id;
        state.suspect({ node_id: target.node_id, incarnation: target.incarnation, from: nodeId });
        accusing = undefined;
      }
      round();
    });
  }

  return {
    start() {
      if (!stopped) return;
      stopped = false;
      // A member first heard of joins the current round at a random place, not only the next round.
      unsubscribe = table.onChange((change) => {
        if (change.node_id === nodeId) return;
        if (change.from === 'none' && index < order.length) order.splice(index + randomInt(random, order.length - index + 1), 0, change.node_id);
        if (change.to === 'suspect' && change.node_id !== accusing && !urgent.includes(change.node_id)) urgent.push(change.node_id);
      });
      after(random.next() * settings.probe_interval, round);
    },
    stop() {
      stopped = true;
      unsubscribe?.();
      for (const timer of timers) clock.clearTimeout(timer);
      timers.clear();
    },
  };
}
