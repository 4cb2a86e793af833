/**
 * The calling side of node-to-node gRPC: one channel per node (over TLS
 * when this node's listener serves it, node-tls.ts), and the messages for
 * each node gathered into one frame of its `DeliverStream`
 * (deliver-streams.ts): all those routed in the same turn of the event
 * loop, up to `MAX_BATCH`. A node that cannot be reached refuses every
 * message of the batch (`unknown_receiver`, naming the node), so the
 * sender hears of it.
 */
import { Metadata, credentials, type Client, type ClientReadableStream, type ServiceError } from '@grpc/grpc-js';
import { createRealClock, type Clock } from '../../supervisors/clock.js';
import type { Agent } from '../agents/agent-service-types.js';
import type { RouteOutcome } from '../agents/router.js';
import { errorFromStatus } from '../api/grpc/grpc-errors.js';
import { FAILURE_REASONS, type FailureReason, type Message } from '../bus/message.js';
import { SvcError } from '../errors/svc-error.js';
import { clusterClientConstructor, clusterPath } from './cluster-proto.js';
import { createDeliverStreams } from './deliver-streams.js';
import { encodeForwarded } from './forwarded-message.js';
import type { ChannelCredentialsSource } from './node-tls.js';
import { encodeHandOver, handOverContent, type HandOver } from './hand-over.js';
import { moduleContent } from './module-content.js';
import { asRegistryEntry, type RegistryEntry } from './registry-entry.js';
import { signCall, type CallKey } from './node-call-auth.js';
import type { WatchEventProto } from './watch-event.js';

/** Messages in one Deliver frame at most; more start another. */
export const MAX_BATCH = 256;
/** A node-to-node call gives up after this. */
export const NODE_CALL_TIMEOUT_MS = 5_000;
/** A hand-over waits for the agent to start on the called node (admission and start included). */
export const HAND_OVER_TIMEOUT_MS = 30_000;
/** Modules travel between nodes in one message; the largest a server accepts (runtime.max_module_size) is far below. */
const MAX_MESSAGE_BYTES = 256 * 1024 * 1024;

export interface NodeRef {
  readonly node_id: string;
  readonly grpc_address: string;
}

export interface NodeClients {
  deliver(node: NodeRef, message: Message): Promise<RouteOutcome>;
  getAgent(node: NodeRef, agentId: string): Promise<Agent>;
  /** The agents among `agentIds` that `node` hosts, as it answers them; within `timeoutMs`. */
  getAgents(node: NodeRef, agentIds: readonly string[], timeoutMs: number): Promise<Agent[]>;
  undeploy(node: NodeRef, agentId: string): Promise<void>;
  /** Stores a module on `node` as a replica; without bytes, asks whether it holds it (NOT_FOUND when not). */
  storeModule(node: NodeRef, sha256: string, module: Uint8Array | undefined): Promise<void>;
  fetchModule(node: NodeRef, sha256: string): Promise<Uint8Array>;
  /** Hands an agent over to `node`; resolves with the entry it wrote. */
  handOver(node: NodeRef, handOver: HandOver): Promise<RegistryEntry | undefined>;
  /** Whether `node` accepts this node's claim of `name` for `agentId`. */
  claimName(node: NodeRef, name: string, agentId: string): Promise<boolean>;
  /** Follows an agent `node` hosts (`Watch`): open until cancelled, ended by the node, or failed. */
  watch(node: NodeRef, agentId: string): ClientReadableStream<WatchEventProto>;
  /** Drops this node's claim of `name` for `agentId` on `node`. */
  releaseName(node: NodeRef, name: string, agentId: string): Promise<void>;
  close(): void;
}

export interface NodeClientsOptions {
  readonly nodeId: string;
  readonly key: CallKey;
  readonly now: () => number;
  /** Runs the deadline of each Deliver frame; the real clock by default. */
  readonly clock?: Clock;
  /** The credentials of each new channel (node-tls.ts); plaintext by default. */
  readonly credentials?: ChannelCredentialsSource;
  /** Told when a node's DeliverStream fails (unreachable, refused, no answer in time). */
  readonly streamFailed?: (grpcAddress: string, reason: string) => void;
}

interface Pending {
  readonly node: NodeRef;
  readonly texts: string[];
  readonly resolvers: Array<(outcome: RouteOutcome) => void>;
}

type Unary = (request: unknown, metadata: Metadata, options: { deadline: number }, callback: (error: ServiceError | null, response?: unknown) => void) => void;

const isFailureReason = (value: string): value is FailureReason => (FAILURE_REASONS as readonly string[]).includes(value);

function rebuild(error: ServiceError): SvcError {
  const body = errorFromStatus(error);
  return new SvcError(body.code, body.message, body.metadata);
}

export function createNodeClients(options: NodeClientsOptions): NodeClients {
  const Constructor = clusterClientConstructor();
  const clients = new Map<string, Client>();
  const pending = new Map<string, Pending>();
  const streams = createDeliverStreams({
    nodeId: options.nodeId,
    key: options.key,
    now: options.now,
    clock: options.clock ?? createRealClock(),
    client: (address) => clientFor(address),
    timeoutMs: NODE_CALL_TIMEOUT_MS,
    ...(options.streamFailed === undefined ? {} : { failed: options.streamFailed }),
  });
  const channelCredentials = options.credentials ?? (() => credentials.createInsecure());

  function clientFor(address: string): Client {
    let client = clients.get(address);
    if (client === undefined) {
      client = new Constructor(address, channelCredentials(), {
        'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
        'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
      });
      clients.set(address, client);
    }
    return client;
  }

  function call<Res>(node: NodeRef, method: string, request: unknown, content: string, timeoutMs = NODE_CALL_TIMEOUT_MS): Promise<Res> {
    const metadata = new Metadata();
    for (const [name, value] of Object.entries(signCall(options.key, clusterPath(method), options.nodeId, options.now(), content))) metadata.set(name, value);
    const client = clientFor(node.grpc_address) as unknown as Record<string, Unary>;
    return new Promise((resolve, reject) => {
      client[method]!.call(client, request, metadata, { deadline: Date.now() + timeoutMs }, (error, response) => {
        if (error) reject(error);
        else resolve(response as Res);
      });
    });
  }

  function flush(nodeId: string): void {
    const batch = pending.get(nodeId);
    if (batch === undefined) return;
    pending.delete(nodeId);
    streams.send(batch.node.grpc_address, batch.texts).then(
      (outcomes) => {
        batch.resolvers.forEach((resolve, i) => {
          const outcome = outcomes[i];
          if (outcome?.ok === true) resolve({ ok: true });
          else resolve({ ok: false, reason: outcome !== undefined && isFailureReason(outcome.reason) ? outcome.reason : 'unknown_receiver', ...(outcome?.detail ? { detail: outcome.detail } : {}) });
        });
      },
      (error: Error) => {
        const detail = `node ${batch.node.node_id} could not be reached: ${error.message}`;
        for (const resolve of batch.resolvers) resolve({ ok: false, reason: 'unknown_receiver', detail });
      },
    );
  }

  return {
    deliver(node, message) {
      let batch = pending.get(node.node_id);
      if (batch === undefined) {
        batch = { node, texts: [], resolvers: [] };
        pending.set(node.node_id, batch);
        queueMicrotask(() => flush(node.node_id));
      }
      const joined = batch;
      joined.texts.push(encodeForwarded(message));
      const outcome = new Promise<RouteOutcome>((resolve) => joined.resolvers.push(resolve));
      if (joined.texts.length >= MAX_BATCH) flush(node.node_id);
      return outcome;
    },
    async getAgent(node, agentId) {
      try {
        const reply = await call<{ agent_json: string }>(node, 'GetAgent', { agent_id: agentId }, agentId);
        return JSON.parse(reply.agent_json) as Agent;
      } catch (error) {
        throw rebuild(error as ServiceError);
      }
    },
    async getAgents(node, agentIds, timeoutMs) {
      try {
        const reply = await call<{ agents_json: string[] }>(node, 'GetAgents', { agent_ids: agentIds }, agentIds.join('\n'), timeoutMs);
        return reply.agents_json.map((json) => JSON.parse(json) as Agent);
      } catch (error) {
        throw error instanceof SyntaxError ? error : rebuild(error as ServiceError);
      }
    },
    async undeploy(node, agentId) {
      try {
        await call(node, 'UndeployAgent', { agent_id: agentId }, agentId);
      } catch (error) {
        throw rebuild(error as ServiceError);
      }
    },
    async storeModule(node, sha256, module) {
      const bytes = module === undefined ? Buffer.alloc(0) : Buffer.from(module.buffer, module.byteOffset, module.byteLength);
      try {
        await call(node, 'StoreModule', { sha256, module: bytes }, moduleContent(sha256, bytes));
      } catch (error) {
        throw rebuild(error as ServiceError);
      }
    },
    async fetchModule(node, sha256) {
      try {
        const reply = await call<{ module: Buffer }>(node, 'FetchModule', { sha256 }, sha256);
        return new Uint8Array(reply.module);
      } catch (error) {
        throw rebuild(error as ServiceError);
      }
    },
    async handOver(node, handOver) {
      const request = encodeHandOver(handOver);
      try {
        const reply = await call<{ entry_json: string }>(node, 'HandOver', request, handOverContent(request), HAND_OVER_TIMEOUT_MS);
        return asRegistryEntry(JSON.parse(reply.entry_json));
      } catch (error) {
        throw error instanceof SyntaxError ? error : rebuild(error as ServiceError);
      }
    },
    async claimName(node, name, agentId) {
      try {
        return (await call<{ accepted: boolean }>(node, 'ClaimName', { name, agent_id: agentId }, `${name}\n${agentId}`)).accepted;
      } catch (error) {
        throw rebuild(error as ServiceError);
      }
    },
    watch(node, agentId) {
      const metadata = new Metadata();
      for (const [name, value] of Object.entries(signCall(options.key, clusterPath('Watch'), options.nodeId, options.now(), agentId))) metadata.set(name, value);
      const client = clientFor(node.grpc_address) as unknown as Record<string, (request: unknown, metadata: Metadata) => ClientReadableStream<WatchEventProto>>;
      return client.Watch!.call(client, { agent_id: agentId }, metadata);
    },
    async releaseName(node, name, agentId) {
      try {
        await call(node, 'ReleaseName', { name, agent_id: agentId }, `${name}\n${agentId}`);
      } catch (error) {
        throw rebuild(error as ServiceError);
      }
    },
    close() {
      streams.close();
      for (const client of clients.values()) client.close();
      clients.clear();
    },
  };
}
