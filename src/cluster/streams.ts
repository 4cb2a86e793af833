/**
 * Request/response exchanges over the transport's streams (TCP): push-pull,
 * the TCP fallback of a probe, and reliable user messages. Each frame is
 * sealed like a packet, on its own channel.
 */
import type { Envelope } from './gossip-cipher.js';
import { decodeStreamRequest, decodeStreamResponse, encodeStreamRequest, encodeStreamResponse, GossipDecodeError } from './gossip-codec.js';
import type { StreamRequest, StreamResponse } from './gossip-messages.js';
import type { GossipStats } from './gossip-stats.js';
import type { Transport } from './transport.js';

export class GossipRejectedError extends Error {
  override readonly name = 'GossipRejectedError';
}

export interface Streams {
  request(address: string, request: StreamRequest, timeoutMs: number): Promise<StreamResponse>;
  /** The transport's request handler: opens, decodes, serves, seals. Rejects what fails authentication or decoding. */
  handle(bytes: Uint8Array, from: string): Promise<Uint8Array>;
}

export interface StreamsOptions {
  readonly transport: Transport;
  readonly envelope: Envelope;
  readonly stats: GossipStats;
  readonly serve: (request: StreamRequest, from: string) => StreamResponse | Promise<StreamResponse>;
}

export function createStreams(options: StreamsOptions): Streams {
  const { transport, envelope, stats } = options;

  function open<T>(bytes: Uint8Array, decode: (plain: Uint8Array) => T): T {
    const plain = envelope.open(bytes, 'stream');
    if (plain === undefined) {
      stats.rejected += 1;
      throw new GossipRejectedError('stream frame failed authentication');
    }
    try {
      return decode(plain);
    } catch (err) {
      if (err instanceof GossipDecodeError) stats.malformed += 1;
      throw err;
    }
  }

  return {
    async request(address, request, timeoutMs) {
      stats.requests_sent += 1;
      const answer = await transport.request(address, envelope.seal(encodeStreamRequest(request), 'stream'), timeoutMs);
      return open(answer, decodeStreamResponse);
    },
    async handle(bytes, from) {
      stats.requests_received += 1;
      const request = open(bytes, decodeStreamRequest);
      const response = await options.serve(request, from);
      return envelope.seal(encodeStreamResponse(response), 'stream');
    },
  };
}
