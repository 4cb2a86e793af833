/**
 * What this node does with each message of an arriving packet: answer pings,
 * run indirect probes for others (with a nack when the target stays silent),
 * hand acks and nacks to the waiting probe, and membership news to the state.
 */
import type { Clock, TimerHandle } from '../../supervisors/clock.js';
import type { AckRegistry } from './ack-registry.js';
import type { Envelope } from './gossip-cipher.js';
import { decodePacket, GossipDecodeError } from './gossip-codec.js';
import type { GossipMessage, IndirectPingMessage } from './gossip-messages.js';
import type { GossipSender } from './gossip-sender.js';
import type { GossipStats } from './gossip-stats.js';
import type { MembershipDelegate } from './membership-delegate.js';
import type { MembershipState } from './membership-state.js';

export interface PacketHandlerOptions {
  readonly nodeId: string;
  readonly address: string;
  readonly clock: Clock;
  readonly envelope: Envelope;
  readonly sender: GossipSender;
  readonly acks: AckRegistry;
  readonly state: MembershipState;
  readonly delegate: MembershipDelegate;
  readonly stats: GossipStats;
  readonly settings: { readonly probe_timeout: number };
}

export interface PacketHandler {
  handle(bytes: Uint8Array, from: string): void;
  /** Cancels the nacks still pending. */
  stop(): void;
}

export function createPacketHandler(options: PacketHandlerOptions): PacketHandler {
  const { nodeId, clock, sender, acks, state, delegate, stats } = options;
  const pendingNacks = new Set<TimerHandle>();

  function indirectPing(request: IndirectPingMessage): void {
    const seq = acks.nextSeq();
    let answered = false;
    acks.expect(seq, options.settings.probe_timeout, {
      onAck: () => {
        answered = true;
        sender.send(request.source_address, { kind: 'ack', seq: request.seq });
      },
    });
    sender.send(request.target_address, { kind: 'ping', seq, target_id: request.target_id, source_id: nodeId, source_address: options.address });
    if (request.nack) {
      const timer = clock.setTimeout(() => {
        pendingNacks.delete(timer);
        if (!answered) sender.send(request.source_address, { kind: 'nack', seq: request.seq });
      }, options.settings.probe_timeout);
      pendingNacks.add(timer);
    }
  }

  function dispatch(message: GossipMessage): void {
    switch (message.kind) {
      case 'ping':
        // A ping for another id reached a node that took over the address: no ack, so the prober learns.
        if (message.target_id === nodeId) sender.send(message.source_address, { kind: 'ack', seq: message.seq });
        return;
      case 'indirect_ping':
        indirectPing(message);
        return;
      case 'ack':
        acks.ack(message.seq);
        return;
      case 'nack':
        acks.nack(message.seq);
        return;
      case 'alive':
        state.alive(message);
        return;
      case 'suspect':
        state.suspect(message);
        return;
      case 'dead':
        state.dead(message);
        return;
      case 'user':
        delegate.onMessage?.(message.payload, message.from);
    }
  }

  function handle(bytes: Uint8Array): void {
    stats.packets_received += 1;
    stats.bytes_received += bytes.length;
    const plain = options.envelope.open(bytes, 'packet');
    if (plain === undefined) {
      stats.rejected += 1;
      return;
    }
    let messages: GossipMessage[];
    try {
      messages = decodePacket(plain);
    } catch (err) {
      if (!(err instanceof GossipDecodeError)) throw err;
      stats.malformed += 1;
      return;
    }
    for (const message of messages) dispatch(message);
  }

  return {
    handle,
    stop() {
      for (const timer of pendingNacks) clock.clearTimeout(timer);
      pendingNacks.clear();
    },
  };
}
