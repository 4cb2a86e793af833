/**
 * One node's membership: SWIM with Lifeguard over a `Transport`, after
 * hashicorp/memberlist. It probes, gossips, exchanges full state now and
 * then, reconnects to dead members so partitions heal, and tells listeners
 * of every change. The layer above plugs in through a `MembershipDelegate`.
 */
import { createRealClock, type Clock, type TimerHandle } from '../../supervisors/clock.js';
import { mathRandom, type Random } from '../../supervisors/random.js';
import { createAckRegistry } from './ack-registry.js';
import { createAwareness } from './awareness.js';
import { createBroadcastQueue } from './broadcast-queue.js';
import { checkSwimSettings, type SwimSettings } from './cluster-settings.js';
import { pushPullIntervalMs } from './formulas.js';
import { createEnvelope } from './gossip-cipher.js';
import type { StreamRequest, StreamResponse } from './gossip-messages.js';
import { createGossipSender } from './gossip-sender.js';
import { createGossipStats, type GossipStats } from './gossip-stats.js';
import { createEventLoopDelaySource, type LoopDelaySource } from './loop-delay.js';
import { publicMember, type Member, type MemberRecord } from './member.js';
import { createMemberTable, type MemberChange, type MemberCounts } from './member-table.js';
import type { MembershipDelegate } from './membership-delegate.js';
import { createMembershipState } from './membership-state.js';
import { createPacketHandler } from './packet-handler.js';
import { schedulePeriodic } from './periodic.js';
import { createProber } from './prober.js';
import { createPushPull } from './push-pull.js';
import { pickRandom } from './seeded-random.js';
import { createStreams } from './streams.js';
import type { Transport } from './transport.js';

/** memberlist's TCPTimeout: a push-pull or a reliable message gives up after this. */
export const STREAM_TIMEOUT_MS = 10_000;
/** How long `leave` waits by default for its message to be gossiped out. */
export const LEAVE_TIMEOUT_MS = 2_000;

export interface MembershipOptions {
  readonly nodeId: string;
  readonly transport: Transport;
  readonly settings: SwimSettings;
  /** The cluster key (`decodeClusterSecret`): gossip is sealed with AES-256-GCM under it; plain without one. */
  readonly secretKey?: Uint8Array;
  /** The gossip address others reach this node at; the transport's own by default. */
  readonly advertiseAddress?: string;
  readonly grpcAddress?: string;
  readonly httpAddress?: string;
  readonly delegate?: MembershipDelegate;
  readonly clock?: Clock;
  readonly random?: Random;
  /** Event-loop delay for the local health score; the process's own (`monitorEventLoopDelay`) by default. */
  readonly loopDelay?: LoopDelaySource;
}

export interface JoinResult {
  readonly contacted: string[];
  readonly failed: Array<{ readonly address: string; readonly error: string }>;
}

export interface Membership {
  readonly nodeId: string;
  /** The gossip address this node advertises. */
  readonly address: string;
  /** Listens and starts probing and gossiping; alone until `join`. */
  start(): void;
  /** Exchanges state with each address (seeds, members known before a restart); they are also retried while this node is alone. */
  join(addresses: readonly string[]): Promise<JoinResult>;
  /** Tells the cluster this node leaves (its members see `left`, not `dead`), waiting at most `timeoutMs` for the news to go out. */
  leave(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
  /** Every member this node knows, itself included, by node id. */
  members(): Member[];
  member(nodeId: string): Member | undefined;
  /** Members per state, itself included: the figures of `svc_cluster_members{state}`. */
  counts(): MemberCounts;
  /** Lifeguard's local health score: 0 is healthy. */
  healthScore(): number;
  stats(): GossipStats;
  onChange(listener: (change: MemberChange) => void): () => void;
  /** Delivers `payload` to the node's delegate over a stream; rejects when it could not. */
  send(nodeId: string, payload: Uint8Array): Promise<void>;
  /** One push-pull exchange with the member now (the layer above merges its state); whether it completed. */
  sync(nodeId: string, timeoutMs: number): Promise<boolean>;
  /** Whether the member answers a direct ping (over the stream transport) within `timeoutMs`, now. */
  reach(nodeId: string, timeoutMs: number): Promise<boolean>;
  /** Sends `payload` in one packet; it may be lost. Throws a RangeError for a payload too large for a packet. */
  sendBestEffort(nodeId: string, payload: Uint8Array): void;
}

export function createMembership(options: MembershipOptions): Membership {
  checkSwimSettings(options.settings);
  const { nodeId, transport, settings } = options;
  const clock = options.clock ?? createRealClock();
  const random = options.random ?? mathRandom;
  const ownLoopDelay = options.loopDelay === undefined;
  const loopDelay = options.loopDelay ?? createEventLoopDelaySource();
  const delegate = options.delegate ?? {};
  const address = options.advertiseAddress ?? transport.address;
  const envelope = createEnvelope(options.secretKey);
  const stats = createGossipStats();
  const table = createMemberTable();
  const awareness = createAwareness(settings.awareness_max_multiplier);
  const acks = createAckRegistry(clock);
  const queue = createBroadcastQueue({ retransmitMult: settings.retransmit_mult, memberCount: () => table.count() });
  const sender = createGossipSender({ nodeId, transport, envelope, queue, delegate, stats });
  const state = createMembershipState({
    nodeId,
    addresses: { address, grpc_address: options.grpcAddress ?? '', http_address: options.httpAddress ?? '' },
    clock,
    table,
    queue,
    awareness,
    settings,
    sendDirect: (to, message) => sender.send(to, message),
  });
  const streams = createStreams({ transport, envelope, stats, serve });
  const pushPull = createPushPull({ table, state, delegate, streams });
  const prober = createProber({
    nodeId,
    address,
    clock,
    random,
    table,
    state,
    sender,
    acks,
    awareness,
    loopDelay,
    stats,
    settings,
    tcpPing: async (to, ping, timeoutMs) => (await streams.request(to, { kind: 'ping', ping }, timeoutMs)).kind === 'ack',
  });
  const packets = createPacketHandler({ nodeId, address, clock, envelope, sender, acks, state, delegate, stats, settings });
  const contacts = new Set<string>();
  let stopGossip: (() => void) | undefined;
  // Probing, push-pull and reconnecting end with a leave; gossip goes on, to spread it.
  const stopChecks: Array<() => void> = [];
  let started = false;
  let stopped = false;

  function serve(request: StreamRequest): StreamResponse {
    switch (request.kind) {
      case 'push_pull': {
        const local = pushPull.local(request.push_pull.join);
        pushPull.merge(request.push_pull);
        return { kind: 'push_pull', push_pull: local };
      }
      case 'ping':
        if (request.ping.target_id !== nodeId) throw new Error(`ping for ${request.ping.target_id}, this is ${nodeId}`);
        return { kind: 'ack', seq: request.ping.seq };
      case 'user':
        delegate.onMessage?.(request.payload, request.from);
        return { kind: 'delivered' };
    }
  }

  const others = () => table.all().filter((m) => m.node_id !== nodeId);
  const pick = (k: number, accept: (m: MemberRecord) => boolean) => pickRandom(random, table.all(), k, (m) => m.node_id !== nodeId && accept(m));
  const quietly = (promise: Promise<unknown>) => promise.catch(() => undefined);

  function gossipRound(): void {
    const now = clock.now();
    // Recently dead members still hear gossip, so one wrongly declared learns of it and refutes.
    const targets = pick(settings.gossip_nodes, (m) => m.state === 'alive' || m.state === 'suspect' || (m.state === 'dead' && now - m.changed_at <= settings.push_pull_interval));
    for (const target of targets) {
      if (!sender.gossip(target.address)) return;
    }
  }

  function pushPullRound(): void {
    const [target] = pick(1, (m) => m.state === 'alive');
    if (target) void quietly(pushPull.exchange(target.address, false, STREAM_TIMEOUT_MS));
  }

  /** Serf's reconnect: partitions heal because each side keeps reaching for the members it holds dead. */
  function reconnectRound(): void {
    const now = clock.now();
    for (const member of others()) {
      if ((member.state === 'dead' || member.state === 'left') && now - member.changed_at > settings.reconnect_timeout) table.forget(member.node_id);
    }
    const [dead] = pick(1, (m) => m.state === 'dead');
    if (dead) void quietly(pushPull.exchange(dead.address, false, STREAM_TIMEOUT_MS));
    if (table.count() <= 1) {
      for (const contact of contacts) void quietly(pushPull.exchange(contact, true, STREAM_TIMEOUT_MS));
    }
  }

  return {
    nodeId,
    address,
    start() {
      if (stopped) throw new Error(`membership ${nodeId}: stopped; create a new one to start again`);
      if (started) return;
      started = true;
      transport.listen({ packet: (bytes, from) => packets.handle(bytes, from), request: (bytes, from) => streams.handle(bytes, from) });
      prober.start();
      stopGossip = schedulePeriodic(clock, random, () => settings.gossip_interval, gossipRound);
      stopChecks.push(
        () => prober.stop(),
        schedulePeriodic(clock, random, () => pushPullIntervalMs(settings.push_pull_interval, table.count()), pushPullRound),
        schedulePeriodic(clock, random, () => settings.reconnect_interval, reconnectRound),
      );
      state.announce();
    },
    async join(addresses) {
      if (!started || stopped) throw new Error(`membership ${nodeId}: join needs a started, not stopped, membership`);
      const targets = [...new Set(addresses)].filter((a) => a !== address && a !== transport.address);
      for (const target of targets) contacts.add(target);
      const outcomes = await Promise.allSettled(targets.map((target) => pushPull.exchange(target, true, STREAM_TIMEOUT_MS)));
      const result: JoinResult = { contacted: [], failed: [] };
      outcomes.forEach((outcome, i) => {
        const target = targets[i] as string;
        if (outcome.status === 'fulfilled') result.contacted.push(target);
        else result.failed.push({ address: target, error: outcome.reason instanceof Error ? outcome.reason.message : String(outcome.reason) });
      });
      return result;
    },
    async leave(timeoutMs = LEAVE_TIMEOUT_MS) {
      if (!started) throw new Error(`membership ${nodeId}: leave needs a started membership`);
      if (state.self.leaving || stopped) return;
      for (const stop of stopChecks) stop();
      const peers = others().filter((m) => m.state === 'alive' || m.state === 'suspect');
      let timer: TimerHandle | undefined;
      const sent = new Promise<void>((resolve) => {
        const message = state.leave(resolve);
        // Told directly as well: a small cluster then knows at once, not after a gossip round.
        for (const peer of peers) sender.send(peer.address, { kind: 'dead', ...message });
        if (peers.length === 0) resolve();
        timer = clock.setTimeout(resolve, timeoutMs);
      });
      await sent;
      clock.clearTimeout(timer);
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      for (const stop of stopChecks) stop();
      stopGossip?.();
      acks.clear();
      packets.stop();
      state.stop();
      queue.clear();
      if (ownLoopDelay) loopDelay.close();
      await transport.close();
    },
    members: () => table.all().map(publicMember).sort((a, b) => (a.node_id < b.node_id ? -1 : a.node_id > b.node_id ? 1 : 0)),
    member(id) {
      const record = table.get(id);
      return record && publicMember(record);
    },
    counts: () => table.counts(),
    healthScore: () => awareness.score,
    stats: () => ({ ...stats }),
    onChange: (listener) => table.onChange(listener),
    async send(id, payload) {
      const target = table.get(id);
      if (!target) throw new Error(`unknown member ${id}`);
      const response = await streams.request(target.address, { kind: 'user', payload, from: nodeId }, STREAM_TIMEOUT_MS);
      if (response.kind !== 'delivered') throw new Error(`${id} answered ${response.kind}`);
    },
    async sync(id, timeoutMs) {
      const target = table.get(id);
      if (!target) return false;
      return pushPull.exchange(target.address, false, timeoutMs).then(
        () => true,
        () => false,
      );
    },
    async reach(id, timeoutMs) {
      const target = table.get(id);
      if (!target) return false;
      const response = await streams.request(target.address, { kind: 'ping', ping: { seq: 0, target_id: id, source_id: nodeId, source_address: address } }, timeoutMs).catch(() => undefined);
      return response?.kind === 'ack';
    },
    sendBestEffort(id, payload) {
      const target = table.get(id);
      if (target) sender.send(target.address, { kind: 'user', payload, from: nodeId });
    },
  };
}
