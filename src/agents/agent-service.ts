/**
 * `AgentService` (agent-service-types.ts), the one use-case layer both doors
 * call: it validates, maps errors to the public codes (agent-errors.ts) and
 * delegates to the current agent host.
 *
 * Decisions a client can rely on:
 * - **deploy** is acknowledged only once the agent's first start succeeded
 *   and then its record and module are durable (`putAgentWithModule`,
 *   synchronous=FULL). If `_initialize`/`_start` traps, runs out of fuel or
 *   overruns `agent_startup_timeout`, nothing is stored and the call fails
 *   (INVALID_MODULE, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED for memory): a
 *   module that cannot start is never deployed. A module whose memory does
 *   not fit the agent's `memory_limit` is refused before it starts
 *   (INVALID_MODULE, sandbox/agent-memory.ts). `max_agents` counts deploys
 *   in progress, so concurrent deploys cannot overshoot it. The steps are the
 *   spans `svc.wasm.validate` (here), then `svc.runtime.create`,
 *   `svc.registry.register` and `svc.events.emit` (agent-host.ts `deploy`).
 *   In a cluster the name is first claimed with every alive node
 *   (ALREADY_EXISTS when another deploy holds it), and the deploy answers
 *   once the module is also stored on `replication_factor` nodes.
 * - **send** resolves once the message is queued (202). NOT_FOUND: no such
 *   agent (or it is being undeployed); RESOURCE_EXHAUSTED: its mailbox is
 *   full, try later; UNAVAILABLE: the agent failed (it takes no messages
 *   until redeployed) or the server is shutting down. A message accepted and
 *   then not handled (the agent crashed on it) comes back as a FIPA `failure`
 *   on the bus, addressed to `client:<principal>`.
 * - **undeploy** is acknowledged once the record is deleted (durably) and
 *   the agent stopped; the delete comes first, so a crash after it never
 *   brings the agent back, and a delete that fails leaves it running and
 *   listed. Of several undeploys of one agent at once, one answers OK and
 *   the others NOT_FOUND.
 * - While the server shuts down, every call but the read-only ones is
 *   UNAVAILABLE.
 */
import { context } from '@opentelemetry/api';
import type { Clock } from '../../supervisors/index.js';
import { filter as where } from 'rxjs';
import { createBoundedSink } from '../bus/bounded-sink.js';
import { validateFilter } from '../bus/filter.js';
import type { IdGenerator } from '../bus/message-id.js';
import { validateMessage } from '../bus/message.js';
import { SvcError } from '../errors/svc-error.js';
import { checkAgentMemory } from '../sandbox/agent-memory.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../store/store.js';
import { isStoreError } from '../store/store-error.js';
import type { Metrics } from '../telemetry/metrics.js';
import { SPAN_ATTRIBUTES, SPANS } from '../telemetry/span-names.js';
import type { Tracing } from '../telemetry/tracing.js';
import { VERSION } from '../version.js';
import { fromRefusal, fromStartFailure, fromStoreError } from './agent-errors.js';
import type { AgentRecord } from '../store/types.js';
import type { AgentHost } from './agent-host.js';
import type { AgentService, CallContext, ClusterMember } from './agent-service-types.js';
import { mergePages } from './agent-pages.js';
import { connectAgentStream } from './agent-stream.js';
import { toAgent } from './agent-view.js';
import type { RemoteAgents } from './remote-agents.js';
import { validateDeployRequest } from './deploy-request.js';
import type { AgentUpdate } from './agent-update.js';
import { validateUpdateRequest } from './update-request.js';
import { createMessageTrace } from './message-trace.js';
import { waitForReply } from './reply-waiter.js';

export interface AgentServiceOptions {
  /** The current agent host; undefined while the server starts, restarts its services or has stopped. */
  host: () => AgentHost | undefined;
  /** This node's id: read from the store when it opens, so the service can exist (and its doors listen) before. */
  nodeId: () => string;
  /** True until the server's services first came up: no host yet means starting, not draining. */
  starting?: () => boolean;
  /** The per-agent memory maximum (`max_memory_pages` × 64 KiB), also what `memory_limit` 0 means. */
  maxMemoryBytes: number;
  /** `runtime.lower_memory_maximum`: a module's maximum above the agent's `memory_limit` is lowered, not refused. */
  lowerMemoryMaximum: boolean;
  /** `server.stream_buffer_bytes`. */
  streamBufferBytes: number;
  /** `server.stream_buffer_size`. */
  streamBufferSize: number;
  /** The server's registry: `metrics` answers its samples, the figures of the Prometheus listener. */
  metrics: Metrics;
  /** The spans of deploys and sends, children of the calling door's span. */
  tracing: Tracing;
  /** The other nodes' agents, in a cluster; undefined on a node that runs alone (or before its cluster started). */
  remote?: () => RemoteAgents | undefined;
  /** This node as `ListMembers` shows it when it runs alone. */
  self?: () => Omit<ClusterMember, 'agents'>;
  /** Times out calls waiting for a reply. */
  clock: Clock;
  /** The server's id generator: agent ids and the ids of client messages. */
  newId: IdGenerator;
}

const MAX_RECENT = 1_000;
/** `timeout_ms` 0 of CallAgent. */
export const DEFAULT_CALL_TIMEOUT_MS = 30_000;
/** A longer wait is a subscription, not a call. */
export const MAX_CALL_TIMEOUT_MS = 600_000;

function unavailable(starting: boolean): SvcError {
  return starting
    ? new SvcError('UNAVAILABLE', 'the server is starting', { reason: 'starting' })
    : new SvcError('UNAVAILABLE', 'the server is not accepting requests', { reason: 'draining' });
}

function agentIdOf(value: unknown, field = 'agent_id'): string {
  if (typeof value !== 'string' || value === '') throw new SvcError('INVALID_ARGUMENT', `${field} is required`, { field, reason: 'required' });
  return value;
}

/** A record read from the store for an agent this node does not run; a storage fault is UNAVAILABLE, as for writes. */
function storedAgent(host: AgentHost, id: string): AgentRecord | undefined {
  try {
    return host.store.getAgent(id);
  } catch (error) {
    throw fromStoreError(error);
  }
}

/** The id of a known agent named by id or name; NOT_FOUND otherwise. */
function known(host: AgentHost, agentId: unknown): string {
  const id = host.resolve(agentIdOf(agentId));
  if (host.get(id) === undefined && storedAgent(host, id) === undefined) throw new SvcError('NOT_FOUND', `agent ${id} not found`, { agent_id: id });
  return id;
}

export function createAgentService(options: AgentServiceOptions): AgentService {
  const { tracing } = options;
  const messageTrace = createMessageTrace(tracing);
  const remote = (): RemoteAgents | undefined => options.remote?.();
  let deploying = 0;

  /** Known here or on another node. */
  function exists(host: AgentHost, id: string): boolean {
    return host.get(id) !== undefined || storedAgent(host, id) !== undefined || remote()?.isRemote(id) === true;
  }

  /** The host, for calls that change something: refused while shutting down. */
  function active(): AgentHost {
    const host = options.host();
    if (host === undefined || !host.accepting) throw unavailable(options.starting?.() ?? false);
    return host;
  }

  /** The host, for reads. */
  function readable(): AgentHost {
    const host = options.host();
    if (host === undefined) throw unavailable(options.starting?.() ?? false);
    return host;
  }

  return {
    async deploy(request, _ctx) {
      const host = active();
      const valid = validateDeployRequest(request, { maxMemoryBytes: options.maxMemoryBytes });
      if (remote()?.nameTaken(valid.name) === true) {
        throw new SvcError('ALREADY_EXISTS', `an agent named "${valid.name}" already exists`, { field: 'name', name: valid.name, reason: 'conflict' });
      }
      const { maxAgents } = host.settings;
      if (host.size + deploying >= maxAgents) {
        throw new SvcError('RESOURCE_EXHAUSTED', `this instance hosts at most ${maxAgents} agents`, { reason: 'max_agents', limit: String(maxAgents) });
      }
      // Reserved until the host takes the agent in (synchronously, as `deploy` begins); from then on `size` counts it.
      deploying += 1;
      let reserved = true;
      try {
        const admitted = await tracing.withSpan(SPANS.wasmValidate, { [SPAN_ATTRIBUTES.moduleSize]: valid.module.byteLength }, async (span) => {
          const result = await host.admission.admit(valid.module);
          span.setAttribute(SPAN_ATTRIBUTES.moduleSha256, result.sha256);
          // Admission is per module (and cached); the agent's own memory_limit is checked per deploy.
          checkAgentMemory(result.info.memory, valid.memoryLimitBytes, options.lowerMemoryMaximum);
          return result;
        });
        if (!host.accepting) throw unavailable(false);
        const agentId = options.newId();
        await remote()?.claimName(valid.name, agentId);
        const agent = {
          agentId,
          name: valid.name,
          capabilities: valid.capabilities,
          resources: { memoryLimit: valid.memoryLimitBytes, cpuShares: valid.cpuShares },
          desiredState: 'running' as const,
          nodeId: options.nodeId(),
          createdAt: Date.now(),
        };
        deploying -= 1;
        reserved = false;
        try {
          await host.deploy(agent, valid.module, admitted);
        } catch (error) {
          await remote()?.releaseName(valid.name, agentId);
          throw isStoreError(error) ? fromStoreError(error) : fromStartFailure(error, agentId);
        }
        await remote()?.replicate(admitted.sha256, valid.module);
        remote()?.localChanged();
        return { agent_id: agentId };
      } finally {
        if (reserved) deploying -= 1;
      }
    },

    async update(request, _ctx) {
      const host = active();
      const valid = validateUpdateRequest(request, { maxMemoryBytes: options.maxMemoryBytes });
      const id = host.resolve(valid.agentId);
      const agent = host.get(id);
      if (agent === undefined && remote()?.isRemote(id) === true) {
        throw new SvcError('FAILED_PRECONDITION', `agent ${id} runs on another node; update it through that node`, { agent_id: id, reason: 'remote_agent' });
      }
      if (agent === undefined) throw new SvcError('NOT_FOUND', `agent ${id} not found`, { agent_id: id });
      const current = agent.record.resources;
      const resources = { memoryLimit: valid.memoryLimitBytes ?? current.memoryLimit, cpuShares: valid.cpuShares ?? current.cpuShares };
      const changesResources = valid.memoryLimitBytes !== undefined || valid.cpuShares !== undefined;
      let module: AgentUpdate['module'];
      if (valid.module !== undefined) {
        const bytes = valid.module;
        const admitted = await tracing.withSpan(SPANS.wasmValidate, { [SPAN_ATTRIBUTES.moduleSize]: bytes.byteLength }, async (span) => {
          const result = await host.admission.admit(bytes);
          span.setAttribute(SPAN_ATTRIBUTES.moduleSha256, result.sha256);
          return result;
        });
        module = { bytes, admitted };
      }
      // The module the agent will run must fit its limit, whichever of the two changed.
      const runs = module?.admitted ?? agent.admitted;
      if (runs !== undefined && (module !== undefined || valid.memoryLimitBytes !== undefined)) checkAgentMemory(runs.info.memory, resources.memoryLimit, options.lowerMemoryMaximum);
      await host.update(id, {
        ...(module === undefined ? {} : { module }),
        ...(valid.capabilities === undefined ? {} : { capabilities: valid.capabilities }),
        ...(changesResources ? { resources } : {}),
        keepState: valid.keepState,
        rollbackWindow: valid.rollbackWindow ?? host.settings.rollbackWindow ?? { kind: 'off' },
      });
      remote()?.localChanged();
      const updated = host.get(id);
      if (updated === undefined) throw new SvcError('NOT_FOUND', `agent ${id} not found`, { agent_id: id });
      return toAgent(updated.record, updated);
    },

    async undeploy(agentId, _ctx) {
      const host = active();
      const id = host.resolve(agentIdOf(agentId));
      const cluster = remote();
      if (host.get(id) === undefined && cluster?.isRemote(id) === true) {
        await cluster.undeploy(id);
        return;
      }
      try {
        // On this node the host undeploys it; otherwise only its record is left to delete.
        if (host.get(id) !== undefined) await host.remove(id);
        else host.store.deleteAgent(id);
      } catch (error) {
        throw fromStoreError(error);
      }
      remote()?.localChanged();
    },

    async list(request, _ctx) {
      const host = readable();
      const pageSize = request.page_size ?? 0;
      if (!Number.isSafeInteger(pageSize) || pageSize < 0) {
        throw new SvcError('INVALID_ARGUMENT', 'page_size must be a whole number >= 0', { field: 'page_size', reason: 'wrong_type' });
      }
      const pageToken = request.page_token ?? '';
      const cluster = remote();
      try {
        const page = host.store.listAgents({ pageSize, pageToken });
        const agents = page.agents.map((record) => toAgent(record, host.get(record.agentId)));
        if (cluster === undefined) return { agents, next_page_token: page.nextPageToken };
        const size = pageSize === 0 ? DEFAULT_PAGE_SIZE : Math.min(pageSize, MAX_PAGE_SIZE);
        return await cluster.counted(mergePages({ agents, more: page.nextPageToken !== '' }, cluster.list(), pageToken, size));
      } catch (error) {
        const mapped = fromStoreError(error);
        throw mapped.code === 'INVALID_ARGUMENT' ? new SvcError(mapped.code, mapped.message, { ...mapped.metadata, field: 'page_token' }) : mapped;
      }
    },

    async get(agentId, ctx) {
      const host = readable();
      const id = host.resolve(agentIdOf(agentId));
      const runtime = host.get(id);
      if (runtime !== undefined) return toAgent(runtime.record, runtime);
      const cluster = remote();
      if (cluster?.isRemote(id) === true) return cluster.get(id, ctx);
      const record = storedAgent(host, id);
      if (record === undefined) throw new SvcError('NOT_FOUND', `agent ${id} not found`, { agent_id: id });
      return toAgent(record, undefined);
    },

    async restart(agentId, _ctx) {
      const host = active();
      const id = host.resolve(agentIdOf(agentId));
      await host.restart(id);
      const runtime = host.get(id);
      if (runtime === undefined) throw new SvcError('NOT_FOUND', `agent ${id} not found`, { agent_id: id });
      return toAgent(runtime.record, runtime);
    },

    async send(input, ctx: CallContext, receiverOverride) {
      const host = active();
      const message = validateMessage(input, {
        sender: `client:${ctx.principal}`,
        newId: options.newId,
        ...(receiverOverride === undefined ? {} : { receiver: receiverOverride }),
      });
      // The door's span is active: the message's `svc.messages.send` span is its child.
      let outcome = messageTrace.sendFromClient(message, context.active(), (accepted) => host.router.route(accepted));
      // A client hears the other node's refusal as it would this node's.
      if (outcome.ok && outcome.forwarded !== undefined) outcome = await outcome.forwarded;
      if (!outcome.ok) {
        options.metrics.messageErrors.inc({ message_type: message.message_type });
        throw fromRefusal(outcome.reason, message.receiver);
      }
      return { message_id: message.message_id };
    },

    async call(input, ctx, callOptions = {}) {
      const host = active();
      const timeoutMs = callOptions.timeout_ms ?? 0;
      if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 0 || timeoutMs > MAX_CALL_TIMEOUT_MS) {
        throw new SvcError('INVALID_ARGUMENT', `timeout_ms must be a whole number in 0..${MAX_CALL_TIMEOUT_MS}`, { field: 'timeout_ms', reason: 'out_of_range' });
      }
      const message = validateMessage(input, { sender: `client:${ctx.principal}`, newId: options.newId });
      const waiter = waitForReply(host.bus, options.clock, message, timeoutMs === 0 ? DEFAULT_CALL_TIMEOUT_MS : timeoutMs);
      const outcome = messageTrace.sendFromClient(message, context.active(), (accepted) => host.router.route(accepted));
      if (!outcome.ok) {
        waiter.cancel();
        options.metrics.messageErrors.inc({ message_type: message.message_type });
        throw fromRefusal(outcome.reason, message.receiver);
      }
      return waiter.reply;
    },

    subscribe(filter, write, _ctx) {
      const host = active();
      const valid = validateFilter(filter);
      // A stream filtered by an agent that does not exist would wait forever for nothing.
      const id = valid.agent_id === undefined ? undefined : host.resolve(valid.agent_id);
      if (id !== undefined && !exists(host, id)) {
        throw new SvcError('NOT_FOUND', `agent ${id} not found`, { agent_id: id });
      }
      const buffer = { bufferSize: options.streamBufferSize, bufferBytes: options.streamBufferBytes };
      if (id === undefined) return host.bus.connect(valid, write, buffer);
      return connectAgentStream(host, { ...valid, agent_id: id }, write, { remote: remote(), newId: options.newId, buffer });
    },

    async logs(agentId, _ctx, limit) {
      const host = readable();
      const id = known(host, agentId);
      if (limit !== undefined && limit !== 0 && (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_RECENT)) {
        throw new SvcError('INVALID_ARGUMENT', `limit must be a whole number in 1..${MAX_RECENT}`, { field: 'limit', reason: 'out_of_range' });
      }
      return { lines: host.logs.recent(id, limit === 0 ? undefined : limit) };
    },

    followLogs(agentId, write, _ctx) {
      const host = active();
      const id = known(host, agentId);
      return createBoundedSink(host.logs.lines.pipe(where((line) => line.agent_id === id)), write, { bufferSize: options.streamBufferSize });
    },

    async recentMessages(agentId, _ctx, limit) {
      const host = readable();
      const id = host.resolve(agentIdOf(agentId));
      if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_RECENT)) {
        throw new SvcError('INVALID_ARGUMENT', `limit must be a whole number in 1..${MAX_RECENT}`, { field: 'limit', reason: 'out_of_range' });
      }
      if (!exists(host, id)) throw new SvcError('NOT_FOUND', `agent ${id} not found`, { agent_id: id });
      return host.history.recent(id, limit);
    },

    async health(ctx) {
      const host = options.host();
      if (host === undefined) return { status: 'unavailable', version: VERSION, agents: { running: 0, capacity: 0 }, trace_id: ctx.trace_id };
      const counts = host.countStates();
      return {
        status: host.accepting ? 'healthy' : 'unavailable',
        version: VERSION,
        agents: { running: counts.running + counts.executing + counts.hibernated, capacity: host.settings.maxAgents },
        trace_id: ctx.trace_id,
      };
    },

    metrics(_ctx) {
      return options.metrics.toSamples();
    },

    async members(_ctx) {
      const cluster = remote();
      if (cluster !== undefined) return { members: cluster.members() };
      const self = options.self?.();
      const host = options.host();
      return { members: self === undefined ? [] : [{ ...self, agents: host?.activeAgents() ?? 0 }] };
    },
  };
}
