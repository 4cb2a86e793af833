/**
 * The calling side of `DeliverStream` (cluster.proto): one long-lived
 * stream per node, opened on the first batch for it, each batch a frame
 * with its sequence number and MAC, answered by a frame of outcomes. A
 * unary call per batch cost a new HTTP/2 stream, its metadata and the
 * listener's interceptors on every hop; a frame on an open stream costs
 * none of them.
 *
 * When the stream fails, ends, or leaves a frame unanswered for
 * `NODE_CALL_TIMEOUT_MS`, every batch waiting on it is refused and the next
 * batch opens a new stream, so batches keep their order per node.
 */
import { Metadata, type Client, type ClientDuplexStream, type ServiceError } from '@grpc/grpc-js';
import type { Clock, TimerHandle } from '../../supervisors/clock.js';
import { clusterPath, type DeliverOutcomeProto } from './cluster-proto.js';
import { signCall, signFrame, TIME_HEADER, type CallKey } from './node-call-auth.js';

const PATH = clusterPath('DeliverStream');

export interface DeliverFrameProto {
  seq: number;
  messages: string[];
  mac: string;
}

export interface DeliverFrameOutcomesProto {
  seq: number;
  outcomes: DeliverOutcomeProto[];
}

export interface DeliverStreams {
  /** One outcome per text, in order; rejects when the node does not answer the batch. */
  send(address: string, texts: string[]): Promise<DeliverOutcomeProto[]>;
  /** Ends every stream; batches still waiting are refused. */
  close(): void;
}

export interface DeliverStreamsOptions {
  readonly nodeId: string;
  readonly key: CallKey;
  /** Wall-clock milliseconds: the stream's `svc-cluster-time`. */
  readonly now: () => number;
  readonly clock: Clock;
  /** The channel to the node at this gRPC address. */
  readonly client: (address: string) => Client;
  readonly timeoutMs: number;
  /** Told when a stream fails on its own (not when this node closes it, nor when the called node ends it). */
  readonly failed?: (address: string, reason: string) => void;
}

interface Waiting {
  resolve(outcomes: DeliverOutcomeProto[]): void;
  reject(error: Error): void;
  readonly timer: TimerHandle;
}

interface PeerStream {
  readonly call: ClientDuplexStream<DeliverFrameProto, DeliverFrameOutcomesProto>;
  readonly time: string;
  seq: number;
  readonly waiting: Map<number, Waiting>;
  failed: boolean;
}

type OpenStream = (metadata: Metadata) => ClientDuplexStream<DeliverFrameProto, DeliverFrameOutcomesProto>;

export function createDeliverStreams(options: DeliverStreamsOptions): DeliverStreams {
  const { clock } = options;
  const streams = new Map<string, PeerStream>();

  function fail(address: string, stream: PeerStream, error: Error, quiet = false): void {
    if (stream.failed) return;
    stream.failed = true;
    if (!quiet) options.failed?.(address, error.message);
    if (streams.get(address) === stream) streams.delete(address);
    for (const waiting of stream.waiting.values()) {
      clock.clearTimeout(waiting.timer);
      waiting.reject(error);
    }
    stream.waiting.clear();
    stream.call.cancel();
  }

  function open(address: string): PeerStream {
    const headers = signCall(options.key, PATH, options.nodeId, options.now(), '');
    const metadata = new Metadata();
    for (const [name, value] of Object.entries(headers)) metadata.set(name, value);
    const client = options.client(address) as unknown as { DeliverStream: OpenStream };
    const call = client.DeliverStream.call(client, metadata);
    const stream: PeerStream = { call, time: headers[TIME_HEADER]!, seq: 0, waiting: new Map(), failed: false };
    call.on('data', (reply: DeliverFrameOutcomesProto) => {
      const waiting = stream.waiting.get(reply.seq);
      if (waiting === undefined) return;
      stream.waiting.delete(reply.seq);
      clock.clearTimeout(waiting.timer);
      waiting.resolve(reply.outcomes);
    });
    call.on('error', (error: ServiceError) => fail(address, stream, new Error(error.details || error.message)));
    call.on('end', () => fail(address, stream, new Error('the node ended the stream'), true));
    streams.set(address, stream);
    return stream;
  }

  return {
    send(address, texts) {
      const stream = streams.get(address) ?? open(address);
      stream.seq += 1;
      const seq = stream.seq;
      return new Promise((resolve, reject) => {
        const timer = clock.setTimeout(() => fail(address, stream, new Error(`no answer within ${options.timeoutMs} ms`)), options.timeoutMs);
        stream.waiting.set(seq, { resolve, reject, timer });
        stream.call.write({ seq, messages: texts, mac: signFrame(options.key, PATH, options.nodeId, stream.time, seq, texts.join('\n')) });
      });
    },
    close() {
      for (const [address, stream] of [...streams]) fail(address, stream, new Error('this node is stopping'), true);
    },
  };
}
