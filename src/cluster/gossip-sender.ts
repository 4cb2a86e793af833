/**
 * Sends packets: the message at hand, then as much pending gossip as fits
 * (memberlist's piggybacking), framed as one `Packet` and sealed.
 */
import type { BroadcastQueue } from './broadcast-queue.js';
import type { Envelope } from './gossip-cipher.js';
import { encodeMessage, encodePacket, PACKET_ITEM_OVERHEAD } from './gossip-codec.js';
import type { GossipMessage } from './gossip-messages.js';
import type { GossipStats } from './gossip-stats.js';
import type { MembershipDelegate } from './membership-delegate.js';
import type { Transport } from './transport.js';

export interface GossipSender {
  /** Sends `messages` with gossip piggybacked; throws a RangeError when they alone overflow a packet. */
  send(address: string, ...messages: GossipMessage[]): void;
  /** Sends pending gossip alone; false when there was none. */
  gossip(address: string): boolean;
}

export interface GossipSenderOptions {
  readonly nodeId: string;
  readonly transport: Transport;
  readonly envelope: Envelope;
  readonly queue: BroadcastQueue;
  readonly delegate: MembershipDelegate;
  readonly stats: GossipStats;
}

export function createGossipSender(options: GossipSenderOptions): GossipSender {
  const { transport, envelope, queue, delegate, stats, nodeId } = options;
  const budget = transport.maxPacketBytes - envelope.overhead;
  // A payload of the layer above travels as a `User` message: its field tags, lengths and our id.
  const userOverhead = PACKET_ITEM_OVERHEAD + 9 + Buffer.byteLength(nodeId);

  function piggyback(room: number): Uint8Array[] {
    const own = queue.take(room, PACKET_ITEM_OVERHEAD);
    const left = room - own.reduce((sum, bytes) => sum + bytes.length + PACKET_ITEM_OVERHEAD, 0);
    if (!delegate.broadcasts || left <= userOverhead) return own;
    const theirs = delegate.broadcasts(userOverhead, left).map((payload) => encodeMessage({ kind: 'user', payload, from: nodeId }));
    return [...own, ...theirs];
  }

  function transmit(address: string, parts: readonly Uint8Array[]): void {
    const sealed = envelope.seal(encodePacket(parts), 'packet');
    stats.packets_sent += 1;
    stats.bytes_sent += sealed.length;
    transport.sendPacket(address, sealed);
  }

  return {
    send(address, ...messages) {
      const parts = messages.map(encodeMessage);
      const used = parts.reduce((sum, bytes) => sum + bytes.length + PACKET_ITEM_OVERHEAD, 0);
      if (used > budget) throw new RangeError(`a packet holds ${budget} bytes of messages, not ${used}; send it over a stream`);
      transmit(address, [...parts, ...piggyback(budget - used)]);
    },
    gossip(address) {
      const parts = piggyback(budget);
      if (parts.length === 0) return false;
      transmit(address, parts);
      return true;
    },
  };
}
