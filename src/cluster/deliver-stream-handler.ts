/**
 * The serving side of `DeliverStream` (cluster.proto): the stream's proof
 * checked once when it opens (node-call-auth.ts, empty content), then each
 * frame's sequence number and MAC, and its messages delivered here in
 * order, answered by one frame of outcomes. The streams stay open until
 * the calling node ends them or this node stops (`endAll`), so a stopping
 * listener does not wait on them.
 */
import type { Metadata, ServerDuplexStream } from '@grpc/grpc-js';
import { toGrpcStatus } from '../api/grpc/grpc-errors.js';
import { SvcError } from '../errors/svc-error.js';
import { newTraceId } from '../telemetry/trace-ids.js';
import { clusterPath, type DeliverOutcomeProto } from './cluster-proto.js';
import type { LocalAgents } from './cluster-service-handlers.js';
import type { DeliverFrameOutcomesProto, DeliverFrameProto } from './deliver-streams.js';
import { decodeForwarded } from './forwarded-message.js';
import { NODE_HEADER, TIME_HEADER, verifyCall, verifyFrame, type CallKey } from './node-call-auth.js';

const PATH = clusterPath('DeliverStream');

const MALFORMED: DeliverOutcomeProto = { ok: false, reason: 'unknown_receiver', detail: 'not a message this node can read' };
const NOT_RUNNING: DeliverOutcomeProto = { ok: false, reason: 'unknown_receiver', detail: 'this node\'s agents are not running' };

export interface DeliverStreamOptions {
  readonly key: CallKey;
  /** Undefined until this node's agents run (and once they stop). */
  readonly local: () => Pick<LocalAgents, 'deliver'> | undefined;
  readonly now: () => number;
}

export interface DeliverStreamService {
  readonly handler: (call: ServerDuplexStream<DeliverFrameProto, DeliverFrameOutcomesProto>) => void;
  /** Ends every open stream (this node stops); the calling nodes open new ones where they still call. */
  endAll(): void;
}

type Call = ServerDuplexStream<DeliverFrameProto, DeliverFrameOutcomesProto>;

function refuse(call: Call, code: 'UNAUTHENTICATED' | 'UNAVAILABLE', message: string, reason: string): void {
  call.emit('error', toGrpcStatus(new SvcError(code, message, { reason }), newTraceId()));
}

/** Delivered in order now; an outcome that waits (a message held during a hand-over) is awaited. */
function outcomesOf(frame: DeliverFrameProto, local: Pick<LocalAgents, 'deliver'> | undefined, fromNode: string): Promise<DeliverOutcomeProto[]> {
  return Promise.all(
    frame.messages.map(async (text): Promise<DeliverOutcomeProto> => {
      if (local === undefined) return NOT_RUNNING;
      const message = decodeForwarded(text);
      if (message === undefined) return MALFORMED;
      let outcome = local.deliver(message, fromNode);
      if (outcome.ok && outcome.forwarded !== undefined) outcome = await outcome.forwarded;
      return outcome.ok ? { ok: true, reason: '', detail: '' } : { ok: false, reason: outcome.reason, detail: outcome.detail ?? '' };
    }),
  );
}

export function createDeliverStreamService(options: DeliverStreamOptions): DeliverStreamService {
  const open = new Set<Call>();
  let ended = false;

  return {
    handler(call) {
      const header = (name: string): string | undefined => {
        const value = (call.metadata as Metadata).get(name)[0];
        return typeof value === 'string' ? value : undefined;
      };
      const refused = verifyCall(options.key, { get: header }, { path: PATH, peer: call.getPeer(), nowMs: options.now(), content: '' });
      if (refused !== undefined) return refuse(call, 'UNAUTHENTICATED', refused, 'cluster_auth');
      if (ended) return refuse(call, 'UNAVAILABLE', 'this node is stopping', 'draining');
      if (options.local() === undefined) return refuse(call, 'UNAVAILABLE', 'this node\'s agents are not running', 'starting');
      const node = header(NODE_HEADER) ?? '';
      const time = header(TIME_HEADER) ?? '';
      let expected = 1;
      open.add(call);
      call.on('data', (frame: DeliverFrameProto) => {
        if (!open.has(call)) return;
        if (frame.seq !== expected || !verifyFrame(options.key, PATH, node, time, frame.seq, frame.messages.join('\n'), frame.mac)) {
          open.delete(call);
          return refuse(call, 'UNAUTHENTICATED', `frame ${frame.seq} of the stream is out of sequence or not signed with this cluster's secret`, 'cluster_auth');
        }
        expected += 1;
        void outcomesOf(frame, options.local(), node).then((outcomes) => {
          if (open.has(call)) call.write({ seq: frame.seq, outcomes });
        });
      });
      call.on('end', () => {
        open.delete(call);
        call.end();
      });
      call.on('error', () => open.delete(call));
      call.on('cancelled', () => open.delete(call));
    },
    endAll() {
      ended = true;
      for (const call of open) call.end();
      open.clear();
    },
  };
}
