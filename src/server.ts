/**
 * The composition root: the server's supervision tree, built from the
 * configuration (docs/architecture.md).
 *
 *   root (rest_for_one, ordered start and shutdown)
 *   ├── store    SQLite
 *   ├── pool     executor worker threads
 *   ├── bus      message bus and per-agent history
 *   └── agents   the agent host: agent supervisor, dispatcher, router
 *
 * Each service is started after the ones it uses and stopped before them, so
 * on shutdown the agents drain first (each within `agent_shutdown_timeout`),
 * then the bus closes, the pool's workers end and the store closes last. A
 * restarted service restarts every service after it, and a restarted agent
 * host restores the stored agents, so `AgentService` always reaches the
 * current generation through `host()`.
 */
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  createExitSignal,
  createRealClock,
  createSupervisor,
  type ChildExit,
  type ChildHandle,
  type ChildSpec,
  type Clock,
  type Random,
  type Supervisor,
} from '../supervisors/index.js';
import { createAgentHost, type AgentHost } from './agents/agent-host.js';
import { createAgentService } from './agents/agent-service.js';
import type { AgentService } from './agents/agent-service-types.js';
import { agentSettingsFrom, maxAgentMemoryBytes } from './agents/agent-settings.js';
import { createMessageBus, type MessageBus } from './bus/bus.js';
import { createIdGenerator, type IdGenerator } from './bus/message-id.js';
import { createMessageHistory, type MessageHistory } from './bus/history.js';
import type { Config } from './config/schema.js';
import { checkIgnoredSettings } from './config/ignored-settings.js';
import { createClusterHost } from './cluster-host.js';
import { checkClusterSettings } from './cluster/cluster-node.js';
import { MEMBER_STATES } from './cluster/member.js';
import { createServerCluster, type ServerCluster } from './cluster/server-cluster.js';
import { nodeChannelCredentials } from './cluster/node-tls.js';
import { tlsSettingsFrom } from './security/tls/tls-material.js';
import { createAdmission, type Admission } from './sandbox/admission.js';
import { checkProtectedMode } from './security/protected-mode.js';
import { createSecurity, type Security } from './security/security.js';
import { createSendPolicy } from './security/send-policy.js';
import { createExecutorPool } from './sandbox/executor-pool.js';
import { poolOptionsFrom, sandboxLimitsFrom } from './sandbox/limits.js';
import type { ExecutorPool } from './sandbox/types.js';
import { lockDataDir } from './store/data-dir-lock.js';
import type { GuardedStore, StorageStatus } from './store/guarded-store.js';
import { openStore } from './store/open-store.js';
import type { Logger } from './telemetry/logger.js';
import { createMetricsExport } from './telemetry/metrics-export.js';
import { createMetrics, type Metrics } from './telemetry/metrics.js';
import { createTracing, type Tracing } from './telemetry/tracing.js';
import { VERSION } from './version.js';

export interface StartOptions {
  /** Where a relative `storage.data_dir` is resolved; default the process's. */
  cwd?: string;
  /** The `svc_*` metrics to count on (the metrics listener serves its registry); default a new set. */
  metrics?: Metrics;
  /** Drives every timeout and backoff; tests pass a simulated clock. */
  clock?: Clock;
  /** Jitter of the restart backoff. */
  random?: Random;
  /** Mints agent and message ids; default a generator of this server's own. */
  newId?: IdGenerator;
  /** Spans and W3C trace context; default one built from the `observability` section. */
  tracing?: Tracing;
  /**
   * Called with the server before its services start (the store opens, the
   * workers boot, stored agents are restored), so its listeners can bind
   * first: probes then read 503 (starting) on /ready instead of a refused port.
   */
  whileStarting?: (server: Server) => Promise<void>;
  /** `svc start --recover`: accept the store as found when it holds less than the data directory recorded (open-store.ts). */
  recover?: boolean;
  /** Where the listeners bound (read once the services are up): a cluster node announces them to the others. */
  listenerAddresses?: () => { grpc: string; http: string } | undefined;
}

export interface Server {
  readonly service: AgentService;
  readonly dataDir: string;
  readonly nodeId: string;
  readonly admission: Admission;
  /** The `svc_*` metrics; `metrics.registry` is what the metrics listener serves. */
  readonly metrics: Metrics;
  readonly tracing: Tracing;
  /** Authentication, authorization, abuse controls and audit for both doors (DESIGN.md section 9). */
  readonly security: Security;
  /** The clock every timeout and backoff runs on (`StartOptions.clock`). */
  readonly clock: Clock;
  /** This node's part in a cluster (`cluster.addr` set); undefined when it runs alone. */
  readonly cluster: ServerCluster | undefined;
  /** The current agent host (tests, benchmarks); undefined while starting and once stopped. */
  host(): AgentHost | undefined;
  /** False until the services first came up (see `StartOptions.whileStarting`). */
  readonly started: boolean;
  /** Whether the store can write (/ready); not while it is closed. */
  storage(): StorageStatus | undefined;
  /** The root supervisor's exit: normal after `stop`, abnormal when it gave up. */
  readonly exited: Promise<ChildExit>;
  /** Graceful: stop accepting, drain the agents, close the bus, the pool and the store. Idempotent. */
  stop(): Promise<void>;
}

/** A service as a supervised child: it never exits on its own; stop and kill close it. */
function serviceHandle(close: () => Promise<void> | void): ChildHandle {
  const exit = createExitSignal();
  return { onExit: exit.onExit, stop: close, kill: close };
}

export async function startServer(config: Config, log: Logger, options: StartOptions = {}): Promise<Server> {
  checkIgnoredSettings(config, (fields, message) => log.warn(fields, message));
  checkProtectedMode(config);
  // Before anything binds or opens: a non-loopback cluster.addr without cluster.secret stops the start here.
  if (config.cluster.addr !== '') checkClusterSettings(config.cluster);
  const dataDir = resolve(options.cwd ?? process.cwd(), config.storage.data_dir);
  mkdirSync(dataDir, { recursive: true });
  const runtime = config.runtime;
  const settings = agentSettingsFrom(runtime);
  const clock = options.clock ?? createRealClock();
  // Per server, not per process: the monotonic order of ids is this server's state.
  const newId = options.newId ?? createIdGenerator();
  // First of all, so a second server on the same directory stops before it binds or reads anything.
  const lock = lockDataDir(dataDir);
  const openChecked = (): GuardedStore => openStore({ dataDir, recover: options.recover ?? false, clock, log });
  // Opened and checked before the listeners bind: a store refused at start is a start that fails at once.
  let opened: GuardedStore | undefined;
  let security: Security;
  try {
    opened = openChecked();
    // After the store's checks (its connection shares svc.db) and before the doors listen: they authenticate from their first call.
    security = await createSecurity(config, { dataDir, clock, log });
  } catch (error) {
    opened?.close();
    lock.release();
    throw error;
  }
  // One for the server's life, as the security layer's counts are: a restart of the agent host keeps the refusals counted.
  const sendPolicy = createSendPolicy({
    maxRefusals: config.security.max_failed_auth_attempts,
    windowMs: config.security.failed_auth_window,
    autoQuarantine: config.security.auto_quarantine_suspicious_agents,
    clock,
  });
  // Modules are compiled once per sha256 whichever generation of the pool runs them.
  const admission = createAdmission(sandboxLimitsFrom(runtime));
  // One registry for the server's life: counters carry on across a restart of the services.
  const metrics = options.metrics ?? createMetrics({ dataDir, clock });
  const tracing = options.tracing ?? createTracing(config.observability, { serviceVersion: VERSION, log, clock });
  // Pushes the same registry over OTLP when an endpoint is set; its last export comes after the agents drained.
  const metricsExport = createMetricsExport(config.observability, { registry: metrics.registry, serviceVersion: VERSION, log, clock });

  const parts: { store?: GuardedStore; pool?: ExecutorPool; bus?: MessageBus; history?: MessageHistory; host?: AgentHost } = {};
  const nodeId = config.cluster.node_id === '' ? opened.nodeId : config.cluster.node_id;
  // The cluster joins before the services start: until then it reads the members it last knew from the store opened above.
  const clusterHost = createClusterHost(
    { host: () => parts.host, store: () => parts.store ?? opened, nodeId, streamBuffer: { bufferSize: config.server.stream_buffer_size, bufferBytes: config.server.stream_buffer_bytes } },
    () => cluster?.agents()?.localChanged(),
  );
  const cluster: ServerCluster | undefined =
    config.cluster.addr === ''
      ? undefined
      : createServerCluster(config.cluster, { nodeId, host: clusterHost, log, metrics, clock, channelCredentials: nodeChannelCredentials(tlsSettingsFrom(config.security)), ...(options.random === undefined ? {} : { random: options.random }) });
  // A node that runs alone is the one member of its cluster, as ListMembers lists it.
  if (cluster === undefined) for (const state of MEMBER_STATES) metrics.clusterMembers.set({ state }, state === 'alive' ? 1 : 0);

  const children: ChildSpec[] = [
    {
      id: 'store',
      start: () => {
        const store = opened ?? openChecked();
        opened = undefined;
        parts.store = store;
        return serviceHandle(() => {
          if (parts.store === store) parts.store = undefined;
          store.close();
        });
      },
    },
    {
      id: 'pool',
      start: async () => {
        const pool = createExecutorPool({
          workers: runtime.executor_workers,
          ...poolOptionsFrom(runtime),
          maxPendingExecutions: runtime.max_concurrent_executions,
          // The watchdog times runs on the server's clock, as the agents' timeouts do.
          clock,
        });
        pool.on('workerLost', (event) => log.warn({ worker_id: event.workerId, overran: event.overran, lost: event.lost.length }, 'executor worker lost'));
        parts.pool = pool;
        // Ready means executors up (DESIGN.md section 6): a deploy or restore right after start must not spend
        // its agent_startup_timeout waiting for worker threads to boot (300-500 ms under tsx).
        await pool.started();
        return serviceHandle(() => pool.close());
      },
      // Closing terminates the workers; the agents drained before it.
      shutdownTimeoutMs: runtime.agent_shutdown_timeout,
    },
    {
      id: 'bus',
      start: () => {
        const bus = createMessageBus({ subscriberBufferSize: config.server.stream_buffer_size, newId });
        const history = createMessageHistory({
          perAgent: runtime.message_history_size,
          maxAgents: runtime.max_agents,
          bytesPerAgent: runtime.message_history_bytes,
        });
        const untap = bus.tap(history.recorder);
        parts.bus = bus;
        parts.history = history;
        return serviceHandle(() => {
          untap();
          bus.close();
        });
      },
    },
    {
      id: 'agents',
      kind: 'supervisor',
      start: async () => {
        const host = createAgentHost({
          store: parts.store!,
          pool: parts.pool!,
          bus: parts.bus!,
          history: parts.history!,
          admission,
          log,
          metrics,
          tracing,
          clock,
          settings,
          sendPolicy,
          newId,
          ...(options.random === undefined ? {} : { random: options.random }),
          ...(cluster === undefined
            ? {}
            : { remote: { forward: (message) => cluster.agents()?.forward(message) }, movedAway: (agentId: string) => cluster.agents()?.movedAway(agentId) === true }),
        });
        host.onExit(() => {
          if (parts.host === host) parts.host = undefined;
        });
        await host.start();
        parts.host = host;
        return host;
      },
    },
  ];

  const root: Supervisor = createSupervisor({
    id: 'root',
    strategy: 'rest_for_one',
    shutdownOrder: 'ordered',
    children,
    clock,
    ...(options.random === undefined ? {} : { random: options.random }),
  });
  root.on((t) => log.info({ service: t.id, from: t.from, to: t.to, reason: t.reason }, 'service transition'));
  const exited = new Promise<ChildExit>((resolveExit) => root.onExit(resolveExit));
  void exited.then((exit) => {
    if (exit.kind === 'abnormal') log.fatal({ reason: exit.reason }, 'the root supervisor gave up');
  });
  metrics.readAtCollect('agentsActive', () => parts.host?.activeAgents());
  metrics.readAtCollect('messageQueueSize', () => parts.host?.queuedMessages());
  metrics.readAtCollect('messageQueueBytes', () => parts.host?.queuedBytes());
  metrics.readStatesAtCollect(() => parts.host?.countStates());

  let starting = true;
  const service = createAgentService({
    host: () => parts.host,
    nodeId: () => nodeId,
    starting: () => starting,
    maxMemoryBytes: maxAgentMemoryBytes(runtime),
    lowerMemoryMaximum: runtime.lower_memory_maximum,
    streamBufferSize: config.server.stream_buffer_size,
    streamBufferBytes: config.server.stream_buffer_bytes,
    metrics,
    tracing,
    remote: () => cluster?.agents(),
    self: () => {
      const addresses = options.listenerAddresses?.();
      return { node_id: nodeId, address: '', grpc_address: addresses?.grpc ?? '', http_address: addresses?.http ?? '', state: 'alive', incarnation: 0 };
    },
    clock,
    newId,
  });

  let stopping: Promise<void> | undefined;
  const server: Server = {
    service,
    dataDir,
    get nodeId() {
      return nodeId;
    },
    get started() {
      return !starting;
    },
    storage: () => parts.store?.status(),
    admission,
    metrics,
    tracing,
    security,
    clock,
    cluster,
    host: () => parts.host,
    exited,
    stop() {
      // The others hear this node leave (not die) before its agents stop answering.
      stopping ??= (cluster?.stop() ?? Promise.resolve())
        .then(() => root.stop('shutdown'))
        // Both wait on the collector at most `otlp_timeout`, and at the same time.
        .then(() => Promise.all([metricsExport.shutdown(), tracing.shutdown()]))
        .then(() => {
          security.close();
          parts.host = undefined;
          lock.release();
          log.info('stopped');
        });
      return stopping;
    },
  };
  // The doors may listen from here on: until the services are up, calls get UNAVAILABLE (starting).
  try {
    await options.whileStarting?.(server);
  } catch (error) {
    // Nothing started yet but telemetry, the security layer, and the store opened at the top.
    await Promise.all([metricsExport.shutdown(), tracing.shutdown()]);
    security.close();
    opened?.close();
    lock.release();
    throw error;
  }
  // A cluster node joins first: the registry it syncs tells the restore which of its agents moved to another node meanwhile.
  if (cluster !== undefined) {
    const addresses = options.listenerAddresses?.();
    try {
      await cluster.start({ grpc: addresses?.grpc ?? '', http: addresses?.http ?? '' });
    } catch (error) {
      await Promise.all([metricsExport.shutdown(), tracing.shutdown()]);
      security.close();
      opened?.close();
      lock.release();
      throw error;
    }
  }
  try {
    await root.start();
  } catch (error) {
    // The supervisor stopped what it had started, the store included.
    await cluster?.stop();
    security.close();
    lock.release();
    throw error;
  }
  starting = false;
  log.info({ data_dir: dataDir, node_id: nodeId, workers: parts.pool?.stats().workers, agents: parts.host?.size }, 'started');
  return server;
}
