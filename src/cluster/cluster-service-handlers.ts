/**
 * The serving side of node-to-node gRPC (cluster.proto): each call's proof
 * checked (node-call-auth.ts), then handed to this node's agents. Refusals
 * travel as the management API's errors (`svc-error-bin`), so the calling
 * node rebuilds them as they were.
 */
import type { Metadata, ServerUnaryCall, UntypedServiceImplementation, sendUnaryData } from '@grpc/grpc-js';
import type { Agent } from '../agents/agent-service-types.js';
import type { RouteOutcome } from '../agents/router.js';
import type { Message } from '../bus/message.js';
import { toGrpcStatus } from '../api/grpc/grpc-errors.js';
import { SvcError } from '../errors/svc-error.js';
import { newTraceId } from '../telemetry/trace-ids.js';
import { clusterPath, type DeliverOutcomeProto } from './cluster-proto.js';
import { decodeForwarded } from './forwarded-message.js';
import { decodeHandOver, handOverContent, type HandOver, type HandOverProto } from './hand-over.js';
import { moduleContent } from './module-content.js';
import type { RegistryEntry } from './registry-entry.js';
import { verifyCall, type CallKey } from './node-call-auth.js';
import { createWatchHandler, type WatchedAgents } from './watch-handler.js';

/** This node's agents, as the calls of other nodes reach them. */
export interface LocalAgents extends WatchedAgents {
  /** A forwarded message delivered here (never forwarded again), or refused. */
  deliver(message: Message, fromNode: string): RouteOutcome;
  get(agentId: string): Promise<Agent>;
  undeploy(agentId: string): Promise<void>;
  /** Keeps the module as a replica; with no bytes, only confirms it is held (NOT_FOUND otherwise). */
  storeModule(sha256: string, module: Uint8Array | undefined): Promise<void>;
  /** A stored module's bytes; NOT_FOUND when there are none. */
  fetchModule(sha256: string): Promise<Uint8Array>;
  /** Starts an agent another node hands over; resolves with its entry as this node wrote it. */
  handOver(handOver: HandOver, fromNode: string): Promise<RegistryEntry>;
  /** Whether this node accepts another node's claim of a name (name-claims.ts). */
  claimName(name: string, agentId: string, fromNode: string): boolean;
  /** Drops another node's claim of a name for an agent whose deploy failed. */
  releaseName(name: string, agentId: string, fromNode: string): void;
}

export interface ClusterHandlerOptions {
  readonly key: CallKey;
  /** Undefined until this node's agents run: calls are then UNAVAILABLE. */
  readonly local: () => LocalAgents | undefined;
  readonly now: () => number;
}

const MALFORMED: DeliverOutcomeProto = { ok: false, reason: 'unknown_receiver', detail: 'not a message this node can read' };

export function createClusterHandlers(options: ClusterHandlerOptions): UntypedServiceImplementation {
  function unary<Req, Res>(method: string, content: (request: Req) => string, run: (request: Req, local: LocalAgents, fromNode: string) => Promise<Res>) {
    const path = clusterPath(method);
    return (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>): void => {
      const traceId = newTraceId();
      const headers = {
        get: (name: string) => {
          const value = (call.metadata as Metadata).get(name)[0];
          return typeof value === 'string' ? value : undefined;
        },
      };
      const refused = verifyCall(options.key, headers, { path, peer: call.getPeer(), nowMs: options.now(), content: content(call.request) });
      if (refused !== undefined) {
        callback(toGrpcStatus(new SvcError('UNAUTHENTICATED', refused, { reason: 'cluster_auth' }), traceId));
        return;
      }
      const local = options.local();
      if (local === undefined) {
        callback(toGrpcStatus(new SvcError('UNAVAILABLE', 'this node\'s agents are not running', { reason: 'starting' }), traceId));
        return;
      }
      run(call.request, local, headers.get('svc-cluster-node') ?? '').then(
        (value) => callback(null, value),
        (error: unknown) => callback(toGrpcStatus(error, traceId)),
      );
    };
  }

  return {
    Deliver: unary('Deliver', (r: { messages: string[] }) => r.messages.join('\n'), async (request, local, fromNode) => ({
      outcomes: await Promise.all(
        request.messages.map(async (text): Promise<DeliverOutcomeProto> => {
          const message = decodeForwarded(text);
          if (message === undefined) return MALFORMED;
          let outcome = local.deliver(message, fromNode);
          // Held while its agent is handed over: the answer is the new node's.
          if (outcome.ok && outcome.forwarded !== undefined) outcome = await outcome.forwarded;
          return outcome.ok ? { ok: true, reason: '', detail: '' } : { ok: false, reason: outcome.reason, detail: outcome.detail ?? '' };
        }),
      ),
    })),
    GetAgent: unary('GetAgent', (r: { agent_id: string }) => r.agent_id, async (request, local) => ({ agent_json: JSON.stringify(await local.get(request.agent_id)) })),
    StoreModule: unary('StoreModule', (r: { sha256: string; module: Buffer }) => moduleContent(r.sha256, r.module), async (request, local) => {
      await local.storeModule(request.sha256, request.module.byteLength === 0 ? undefined : request.module);
      return {};
    }),
    FetchModule: unary('FetchModule', (r: { sha256: string }) => r.sha256, async (request, local) => ({ module: Buffer.from(await local.fetchModule(request.sha256)) })),
    HandOver: unary('HandOver', (r: HandOverProto) => handOverContent(r), async (request, local, fromNode) => {
      const handOver = decodeHandOver(request);
      if (handOver === undefined) throw new SvcError('INVALID_ARGUMENT', 'not a hand-over this node can read', { reason: 'malformed' });
      return { entry_json: JSON.stringify(await local.handOver(handOver, fromNode)) };
    }),
    ClaimName: unary('ClaimName', (r: { name: string; agent_id: string }) => `${r.name}\n${r.agent_id}`, async (request, local, fromNode) => ({
      accepted: local.claimName(request.name, request.agent_id, fromNode),
    })),
    GetAgents: unary('GetAgents', (r: { agent_ids: string[] }) => r.agent_ids.join('\n'), async (request, local) => {
      const hosted = await Promise.all(
        request.agent_ids.map((id) =>
          local.get(id).catch((error: unknown) => {
            if (error instanceof SvcError && error.code === 'NOT_FOUND') return undefined;
            throw error;
          }),
        ),
      );
      return { agents_json: hosted.filter((agent) => agent !== undefined).map((agent) => JSON.stringify(agent)) };
    }),
    ReleaseName: unary('ReleaseName', (r: { name: string; agent_id: string }) => `${r.name}\n${r.agent_id}`, async (request, local, fromNode) => {
      local.releaseName(request.name, request.agent_id, fromNode);
      return {};
    }),
    UndeployAgent: unary('UndeployAgent', (r: { agent_id: string }) => r.agent_id, async (request, local) => {
      await local.undeploy(request.agent_id);
      return {};
    }),
    Watch: createWatchHandler(options),
  };
}
