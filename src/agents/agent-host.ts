/**
 * The agents of this node: the agent supervisor and its dynamic children,
 * the registry, the dispatcher and the local router, wired together. It is
 * itself a `ChildHandle`, the last child of the server's root supervisor.
 *
 * How the work is divided:
 * - the **agent supervisor** (supervisors/, `one_for_one`, intensity per
 *   child, concurrent shutdown) decides restarts: whether, after which
 *   backoff, and when an agent has crashed too often and goes `failed`. It
 *   enforces `agent_startup_timeout` (`startTimeoutMs`) and
 *   `agent_shutdown_timeout` (`shutdownTimeoutMs`, then `kill`);
 * - each **agent's machine** (agent-machine.ts) holds its visible lifecycle
 *   state; the host forwards the supervisor's transitions to it, and every
 *   state change becomes one log line and one lifecycle event on the bus;
 * - each **incarnation** (agent-incarnation.ts) is one start: instance,
 *   hibernation, wake, graceful stop and kill;
 * - the **dispatcher** (dispatcher.ts) runs messages, beside all of that.
 */
import {
  MAX_TIMER_MS,
  SupervisorError,
  createSupervisor,
  type BackoffOptions,
  type ChildExit,
  type ChildSpec,
  type ChildTransition,
  type Clock,
  type Random,
} from '../../supervisors/index.js';
import type { MessageBus } from '../bus/bus.js';
import type { MessageHistory } from '../bus/history.js';
import type { FailureReason } from '../bus/message.js';
import { SvcError } from '../errors/svc-error.js';
import type { Admission } from '../sandbox/admission.js';
import type { AdmittedModule, ExecutorPool, WorkerLostEvent } from '../sandbox/types.js';
import type { AgentRecord, Store } from '../store/types.js';
import { createAgentLogLimiter } from '../telemetry/agent-log-limiter.js';
import type { Logger } from '../telemetry/logger.js';
import type { Metrics } from '../telemetry/metrics.js';
import { Incarnation } from './agent-incarnation.js';
import { restoreAgents } from './agent-restore.js';
import { AgentRuntime, type AgentEnvironment, type AgentHooks, type AgentOrigin } from './agent-runtime.js';
import type { AgentState } from './agent-service-types.js';
import { createDispatcher, type Dispatcher, type DispatcherStats } from './dispatcher.js';
import { createMetricTally } from './metric-tally.js';
import { createRestartCounts } from './restart-counts.js';
import { createLocalRouter, type Mailboxes, type Router } from './router.js';

export interface AgentSettings {
  maxAgents: number;
  mailboxSize: number;
  /** 0 disables hibernation. */
  idleTimeoutMs: number;
  startupTimeoutMs: number;
  shutdownTimeoutMs: number;
  /** 0 disables the quota. */
  cpuQuotaMillicores: number;
  maxConcurrentExecutions: number;
  maxRestarts: number;
  restartPeriodMs: number;
  backoff: Partial<BackoffOptions>;
}

export interface AgentHostOptions {
  store: Store;
  pool: ExecutorPool;
  bus: MessageBus;
  history: MessageHistory;
  admission: Admission;
  log: Logger;
  /** The server's `svc_*` metrics; the host counts what it sees there. */
  metrics: Metrics;
  clock: Clock;
  random?: Random;
  settings: AgentSettings;
}

export interface HostStats extends DispatcherStats {
  restarts: number;
}

export interface AgentHost {
  readonly store: Store;
  readonly pool: ExecutorPool;
  readonly bus: MessageBus;
  readonly history: MessageHistory;
  readonly admission: Admission;
  readonly settings: AgentSettings;
  /** False once stopping: deploys and sends are refused (UNAVAILABLE). */
  readonly accepting: boolean;
  /** Agents on this node, failed ones included (they count against `max_agents`). */
  readonly size: number;
  /** Starts the agent supervisor and restores every stored agent whose desired state is running. */
  start(): Promise<void>;
  /** Registers and starts an agent; resolves once it is running, rejects (and forgets it) if the first start fails. */
  add(record: AgentRecord, admitted: AdmittedModule): Promise<AgentRuntime>;
  /** Undeploy: stop (drain within the shutdown timeout), forget. NOT_FOUND if unknown. */
  remove(agentId: string): Promise<void>;
  get(agentId: string): AgentRuntime | undefined;
  readonly router: Router;
  countStates(): Record<AgentState, number>;
  /** Agents neither stopped nor failed (`svc_agents_active`). */
  activeAgents(): number;
  /** Messages waiting in mailboxes (`svc_message_queue_size`). */
  queuedMessages(): number;
  stats(): HostStats;
  /* The root supervisor's view of the host (a ChildHandle). */
  onExit(listener: (exit: ChildExit) => void): () => void;
  stop(reason?: string): Promise<void>;
  kill(reason?: string): Promise<void>;
}

const clampTimer = (ms: number) => Math.min(ms, MAX_TIMER_MS);

export function createAgentHost(options: AgentHostOptions): AgentHost {
  const { store, pool, bus, history, admission, log, metrics, clock, settings } = options;
  const agents = new Map<string, AgentRuntime>();
  const agentLog = createAgentLogLimiter(log, { clock });
  const restartCounts = createRestartCounts(store, log);
  let accepting = true;
  let restarts = 0;
  let unsubscribeLost: (() => void) | undefined;
  const tally = createMetricTally(metrics);
  // `svc_messages_sent_total` counts what the bus accepted, whoever sent it.
  const counting = bus.subscribe().subscribe((event) => {
    if (event.kind === 'message' && event.direction === 'sent') tally.sent(event.message.message_type);
  });

  const supervisor = createSupervisor({
    id: 'agents',
    strategy: 'one_for_one',
    intensityScope: 'child',
    shutdownOrder: 'concurrent',
    maxRestarts: settings.maxRestarts,
    periodMs: settings.restartPeriodMs,
    backoff: settings.backoff,
    clock,
    ...(options.random === undefined ? {} : { random: options.random }),
  });

  // The router needs the mailboxes, which need the dispatcher, which routes through the router (declared below).
  const dispatcher: Dispatcher = createDispatcher({
    pool,
    bus,
    clock,
    log,
    metrics,
    tally,
    agentLog,
    maxInFlight: settings.maxConcurrentExecutions,
    route: (message, published) => router.route(message, published),
  });

  // The router asks `refusal` then `enqueue` for the same receiver; remembering it saves a lookup per message.
  let lastLooked: AgentRuntime | undefined;
  const mailboxes: Mailboxes = {
    refusal(receiver) {
      const agent = agents.get(receiver);
      lastLooked = agent;
      if (agent === undefined || !agent.accepting || agent.state === 'stopping' || agent.state === 'stopped') return undefined;
      if (agent.state === 'failed') return 'agent_failed';
      return agent.mailbox.length >= agent.mailbox.capacity ? 'mailbox_full' : null;
    },
    enqueue(message) {
      const agent = lastLooked?.id === message.receiver ? lastLooked : agents.get(message.receiver)!;
      agent.mailbox.push(message);
      agent.arrivals.push(clock.now());
      dispatcher.ready(agent);
    },
  };
  const router: Router = createLocalRouter(bus, mailboxes);

  function rejectMailbox(agent: AgentRuntime, reason: FailureReason, detail?: string): void {
    agent.arrivals.clear();
    for (let message = agent.mailbox.shift(); message !== undefined; message = agent.mailbox.shift()) {
      dispatcher.undeliverable(message, reason, detail);
    }
  }

  const hooks: AgentHooks = {
    transition(agent, from, to, reason) {
      log.info({ agent_id: agent.id, from, to, reason }, 'agent transition');
      bus.publish({ kind: 'lifecycle', agent_id: agent.id, from, to, reason, at: new Date().toISOString() });
      if (to === 'running') dispatcher.ready(agent);
      else if (to === 'failed') rejectMailbox(agent, 'agent_failed');
      else if (to === 'stopped') rejectMailbox(agent, 'unknown_receiver', 'the agent stopped');
    },
    ready: (agent) => dispatcher.ready(agent),
  };

  const env: AgentEnvironment = {
    pool,
    clock,
    log,
    metrics,
    agentLog,
    hooks,
    idleTimeoutMs: settings.idleTimeoutMs,
    mailboxSize: settings.mailboxSize,
    cpuQuotaMillicores: settings.cpuQuotaMillicores,
  };

  /** The supervisor's view of a child, forwarded to the agent's machine. */
  function onSupervisorTransition(t: ChildTransition): void {
    const agent = agents.get(t.id);
    if (agent === undefined) return;
    switch (t.to) {
      case 'starting':
        return agent.send({ type: 'START', reason: t.reason });
      case 'running':
        return agent.send({ type: 'UP', reason: t.reason });
      case 'restarting':
        if (t.attempt !== undefined) {
          restarts += 1;
          restartCounts.count(agent);
        }
        return agent.send({ type: 'RESTARTING', reason: t.reason });
      case 'failed':
        return agent.send({ type: 'FAILED', reason: t.reason });
      case 'stopping':
        return agent.send({ type: 'STOP', reason: t.reason });
      case 'stopped':
        // A stored agent that cannot start again stays listed as failed: it was acknowledged once, and
        // only an undeploy removes it.
        if (agent.origin === 'restore' && t.from === 'starting' && accepting && agent.removing === undefined) {
          return agent.send({ type: 'FAILED', reason: `restore_failed: ${t.reason}` });
        }
        return agent.send({ type: 'STOPPED', reason: t.reason });
    }
  }
  supervisor.on(onSupervisorTransition);

  function childSpec(agent: AgentRuntime): ChildSpec {
    return {
      id: agent.id,
      restart: 'permanent',
      startTimeoutMs: clampTimer(settings.startupTimeoutMs),
      shutdownTimeoutMs: clampTimer(settings.shutdownTimeoutMs),
      start: () => {
        const incarnation = new Incarnation(agent);
        agent.incarnation = incarnation;
        return incarnation.start();
      },
    };
  }

  function register(record: AgentRecord, admitted: AdmittedModule | undefined, origin: AgentOrigin): AgentRuntime {
    const agent = new AgentRuntime(env, record, admitted, origin);
    agents.set(agent.id, agent);
    history.track(agent.id);
    return agent;
  }

  function forget(agent: AgentRuntime): void {
    if (agents.get(agent.id) === agent) agents.delete(agent.id);
    history.forget(agent.id);
    metrics.forgetAgent(agent.id);
    agentLog.forget(agent.id);
    agent.dispose();
  }

  async function add(record: AgentRecord, admitted: AdmittedModule, origin: AgentOrigin = 'deploy'): Promise<AgentRuntime> {
    if (!accepting) throw new SvcError('UNAVAILABLE', 'the server is shutting down', { reason: 'draining' });
    // Registered before it starts, so messages sent meanwhile wait in its mailbox.
    const agent = register(record, admitted, origin);
    try {
      await supervisor.startChild(childSpec(agent));
      metrics.agentsDeployed.inc();
      return agent;
    } catch (error) {
      if (origin === 'deploy') forget(agent);
      throw error;
    }
  }

  async function restore(): Promise<void> {
    const count = await restoreAgents({
      store,
      admission,
      log,
      accepting: () => accepting,
      start: (record, admitted) => add(record, admitted, 'restore'),
      fail: (record, reason) => register(record, undefined, 'restore').send({ type: 'FAILED', reason }),
    });
    if (count > 0) log.info({ agents: count, running: countStates().running }, 'restored stored agents');
  }

  function onWorkerLost(event: WorkerLostEvent): void {
    for (const key of event.lost) agents.get(key.slice(0, key.lastIndexOf('#')))?.incarnation?.lost(key);
  }

  function countStates(): Record<AgentState, number> {
    const counts: Record<AgentState, number> = { starting: 0, running: 0, executing: 0, hibernated: 0, restarting: 0, stopping: 0, stopped: 0, failed: 0 };
    for (const agent of agents.values()) counts[agent.visibleState] += 1;
    return counts;
  }

  function remove(agentId: string): Promise<void> {
    const agent = agents.get(agentId);
    if (agent === undefined) return Promise.reject(new SvcError('NOT_FOUND', `agent ${agentId} not found`, { agent_id: agentId }));
    agent.removing ??= (async () => {
      agent.accepting = false;
      try {
        await supervisor.terminateChild(agentId);
        supervisor.deleteChild(agentId);
      } catch (error) {
        // Not a child: a stored agent that failed to restore.
        if (!(error instanceof SupervisorError && error.code === 'not_found')) throw error;
      }
      if (agent.state !== 'stopped') agent.send({ type: 'STOPPED', reason: 'undeployed' });
      forget(agent);
    })();
    return agent.removing;
  }

  function cleanUp(): void {
    unsubscribeLost?.();
    counting.unsubscribe();
    tally.flush();
    restartCounts.flush();
    agentLog.flush();
    for (const agent of agents.values()) agent.dispose();
    agents.clear();
  }

  return {
    store,
    pool,
    bus,
    history,
    admission,
    settings,
    get accepting() {
      return accepting;
    },
    get size() {
      return agents.size;
    },
    async start() {
      await supervisor.start();
      unsubscribeLost = pool.on('workerLost', onWorkerLost);
      await restore();
    },
    add: (record, admitted) => add(record, admitted, 'deploy'),
    remove,
    get: (agentId) => agents.get(agentId),
    router,
    countStates,
    activeAgents() {
      let active = 0;
      for (const agent of agents.values()) if (agent.state !== 'stopped' && agent.state !== 'failed') active += 1;
      return active;
    },
    queuedMessages() {
      let queued = 0;
      for (const agent of agents.values()) queued += agent.mailbox.length;
      return queued;
    },
    stats: () => ({ ...dispatcher.stats(), restarts }),
    onExit: (listener) => supervisor.onExit(listener),
    async stop(reason = 'shutdown') {
      accepting = false;
      await supervisor.stop(reason);
      cleanUp();
    },
    async kill(reason = 'killed') {
      accepting = false;
      await supervisor.kill(reason);
      cleanUp();
    },
  };
}
