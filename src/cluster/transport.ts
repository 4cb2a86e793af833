/**
 * The I/O under the membership protocol: unreliable packets (UDP) and
 * request/response exchanges (one TCP connection each), both addressed by
 * `host:port`. Bytes are opaque here; sealing and encoding happen above, so
 * every transport carries the same encrypted frames.
 */

export interface TransportHandlers {
  packet(bytes: Uint8Array, from: string): void;
  /** Answers one request; a rejection closes the exchange without an answer. */
  request(bytes: Uint8Array, from: string): Promise<Uint8Array>;
}

export interface Transport {
  /** The `host:port` this transport is bound to (the real port when 0 was asked for). */
  readonly address: string;
  /** Largest packet worth sending: piggybacked gossip is cut to fit. */
  readonly maxPacketBytes: number;
  listen(handlers: TransportHandlers): void;
  /** Fire and forget; a packet may be lost. */
  sendPacket(to: string, bytes: Uint8Array): void;
  /** Rejects when no answer arrived within `timeoutMs`, or the peer could not be reached. */
  request(to: string, bytes: Uint8Array, timeoutMs: number): Promise<Uint8Array>;
  close(): Promise<void>;
}

/** memberlist's UDP budget: fits an Ethernet MTU with room for IP and UDP headers. */
export const MAX_PACKET_BYTES = 1400;

/** Largest request or response frame accepted on a stream (a push-pull of the whole table and the registry). */
export const MAX_STREAM_FRAME_BYTES = 64 * 1024 * 1024;
