/**
 * The agents of this node: the agent supervisor and its dynamic children,
 * the registry, the dispatcher, the local router and the mailboxes
 * (host-mailboxes.ts), wired together. It is itself a `ChildHandle`, the
 * last child of the server's root supervisor.
 *
 * How the work is divided:
 * - the **agent supervisor** (supervisors/, `one_for_one`, intensity per
 *   child, concurrent shutdown) decides restarts: whether, after which
 *   backoff, and when an agent has crashed too often and goes `failed`. Its
 *   decisions go to the agent's machine as events (`onDecision`);
 * - each **agent's machine** (agent-machine.ts) is its lifecycle: it starts,
 *   hibernates, wakes and stops the agent's instance, under
 *   `agent_startup_timeout`, `agent_idle_timeout` and
 *   `agent_shutdown_timeout`, and every visible state change becomes one
 *   log line and one lifecycle event on the bus (lifecycle-events.ts);
 * - the **dispatcher** (dispatcher.ts) runs messages, beside all of that.
 *
 * An undeploy deletes the agent's record first and stops it after: once the
 * delete is committed no restart of the server brings the agent back, and a
 * delete that fails leaves it running and listed. One undeploy claims the
 * agent; another one arriving meanwhile finds it gone (NOT_FOUND).
 *
 * A deploy goes create → register → emit, each step a span under the
 * call's (docs/observability.md): the agent is created and started first and
 * written to the store only once that start succeeded, so a module that
 * cannot start never becomes durable and no restart of the server tries it
 * again. Until it is registered nothing routes to it, lists it or hears of
 * it; a restored agent is registered before it starts (messages wait).
 */
import { SupervisorError, createSupervisor } from '../../supervisors/index.js';
import { PLATFORM_SENDER, type FailureReason } from '../bus/message.js';
import { SvcError } from '../errors/svc-error.js';
import type { AdmittedModule, InstanceSnapshot } from '../sandbox/types.js';
import type { AgentRecord, NewAgent } from '../store/types.js';
import { createAgentLogLimiter } from '../telemetry/agent-log-limiter.js';
import { SPAN_ATTRIBUTES, SPANS } from '../telemetry/span-names.js';
import type { AgentHost, AgentHostOptions } from './agent-host-types.js';
import { draining, memoryPressure, nameTaken } from './agent-errors.js';
import { createAgentLogs, keepingLines } from './agent-logs.js';
import { endCanary } from './agent-canary.js';
import { agentChildSpec } from './agent-child.js';
import { restartAgent } from './agent-restart.js';
import { createAgentUpdater } from './agent-update.js';
import { restoreAgents } from './agent-restore.js';
import { AgentRuntime, type AgentEnvironment, type AgentHooks, type AgentOrigin } from './agent-runtime.js';
import type { AgentState } from './agent-service-types.js';
import { detachedClock } from './detached-clock.js';
import { createDispatcher, type Dispatcher } from './dispatcher.js';
import { createHostMailboxes, sendCheckOf } from './host-mailboxes.js';
import { createLifecycleEvents } from './lifecycle-events.js';
import { createMemoryGuard } from './memory-guard.js';
import { createMessageTrace } from './message-trace.js';
import { createMetricTally } from './metric-tally.js';
import { createRestartCounts } from './restart-counts.js';
import { agentHolds, MESSAGE_RECEIVE } from '../security/send-policy.js';
import { CLIENT_PREFIX, createLocalRouter, type Router } from './router.js';

export type { AgentHost, AgentHostOptions, AgentSettings, HostStats } from './agent-host-types.js';


export function createAgentHost(options: AgentHostOptions): AgentHost {
  const { store, pool, bus, history, admission, log, metrics, tracing, clock, settings, sendPolicy } = options;
  const memory = createMemoryGuard({
    maxQueuedBytes: settings.maxQueuedBytes,
    pressureRatio: settings.memoryPressureRatio,
    ...(options.heap === undefined ? {} : { heap: options.heap }),
  });
  /** Every agent the host runs, registered or still being deployed. */
  const agents = new Map<string, AgentRuntime>();
  /** Name → agent id of the same agents: a taken name is refused before the start, not after it. */
  const names = new Map<string, string>();
  const lifecycle = createLifecycleEvents(bus, log, tracing);
  const messageTrace = createMessageTrace(tracing);
  const logs = createAgentLogs({ maxBytes: settings.logBufferBytes, now: Date.now });
  const limiter = createAgentLogLimiter(log, { clock });
  const agentLog = keepingLines(limiter, logs);
  const restartCounts = createRestartCounts(store, log);
  let accepting = true;
  let restarts = 0;
  const tally = createMetricTally(metrics);
  // `svc_messages_sent_total` counts what the bus accepted, whoever sent it.
  const untapCounting = bus.tap((direction, message) => {
    if (direction === 'sent') tally.sent(message.message_type);
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

  const countRestart = () => metrics.agentRestarts.inc();
  const updater = createAgentUpdater({ store, supervisor, lifecycle, log, metrics, clock, countRestart });

  // The router needs the mailboxes, which need the dispatcher, which routes through the router (declared below).
  const mailboxes = createHostMailboxes({ agents, names, memory, clock, messageTrace, ready: (agent) => dispatcher.ready(agent) });
  const dispatcher: Dispatcher = createDispatcher({
    pool,
    bus,
    clock,
    log,
    metrics,
    tally,
    agentLog,
    messageTrace,
    maxInFlight: settings.maxConcurrentExecutions,
    newId: options.newId,
    route: (message, published) => router.route(message, published),
    ...(sendPolicy === undefined ? {} : { checkSend: sendCheckOf(sendPolicy, mailboxes) }),
    local: { hops: settings.localDeliveryHops, traced: () => tracing.exporting, agentOf: (id) => agents.get(id), mayLend: mailboxes.mayLend },
  });

  const router: Router = createLocalRouter(bus, mailboxes, options.remote, (message, reason, detail) => dispatcher.undeliverable(message, reason, detail));
  // What another node forwarded is delivered here or refused, never forwarded again: nodes whose registries disagree cannot bounce it.
  const localRouter: Router = createLocalRouter(bus, mailboxes);

  function rejectMailbox(agent: AgentRuntime, reason: FailureReason, detail?: string): void {
    agent.arrivals.clear();
    for (let message = agent.takeMessage(); message !== undefined; message = agent.takeMessage()) {
      dispatcher.undeliverable(message, reason, detail);
    }
  }

  const hooks: AgentHooks = {
    transition(agent, from, to, reason) {
      lifecycle.transition(agent, from, to, reason);
      updater.transition(agent, to, reason);
      // A quarantine ends with the agent: an operator's restart starts its count afresh.
      if (from === 'failed' || to === 'stopped') sendPolicy?.forget(agent.id);
      if (to === 'restarting') {
        restarts += 1;
        metrics.agentRestarts.inc();
        restartCounts.count(agent);
      } else if (to === 'failed') rejectMailbox(agent, 'agent_failed');
      else if (to === 'stopped' && !agent.restartRequested) rejectMailbox(agent, 'unknown_receiver', 'the agent stopped');
    },
    ready: (agent) => dispatcher.ready(agent),
  };

  const env: AgentEnvironment = {
    pool,
    clock,
    machineClock: detachedClock(clock),
    log,
    metrics,
    agentLog,
    hooks,
    idleTimeoutMs: settings.idleTimeoutMs,
    startupTimeoutMs: settings.startupTimeoutMs,
    shutdownTimeoutMs: settings.shutdownTimeoutMs,
    mailboxSize: settings.mailboxSize,
    mailboxBytesLimit: settings.mailboxBytes,
    memory,
    cpuQuotaMillicores: settings.cpuQuotaMillicores,
    maxMemoryBytes: settings.maxMemoryBytes,
  };

  /** A new agent in the host's care; registered at once when restored, by `deploy` otherwise. */
  function track(record: AgentRecord, admitted: AdmittedModule | undefined, origin: AgentOrigin): AgentRuntime {
    const agent = new AgentRuntime(env, record, admitted, origin);
    agents.set(agent.id, agent);
    names.set(record.name, agent.id);
    if (agent.registered) history.track(agent.id);
    return agent;
  }

  function forget(agent: AgentRuntime): void {
    if (agents.get(agent.id) === agent) agents.delete(agent.id);
    if (names.get(agent.record.name) === agent.id) names.delete(agent.record.name);
    history.forget(agent.id);
    metrics.forgetAgent(agent.id);
    agentLog.forget(agent.id);
    logs.forget(agent.id);
    endCanary(agent, clock);
    agent.dispose();
  }

  async function deploy(input: NewAgent, module: Uint8Array, admitted: AdmittedModule, state?: InstanceSnapshot): Promise<AgentRuntime> {
    if (!accepting) throw draining();
    if (memory.pressured()) throw memoryPressure();
    if (names.has(input.name)) throw nameTaken(input.name);
    // What the store will hold; its answer replaces it once written.
    const record: AgentRecord = { ...input, moduleSha256: admitted.sha256, moduleSize: admitted.size, moduleVersion: 1, previousModule: null, restartCount: 0, updatedAt: input.createdAt };
    const agent = track(record, admitted, 'deploy');
    agent.pendingRestore = state;
    const attributes = { [SPAN_ATTRIBUTES.agentId]: agent.id };
    let started = false;
    try {
      await tracing.withSpan(SPANS.runtimeCreate, { ...attributes, [SPAN_ATTRIBUTES.agentName]: input.name }, () => supervisor.startChild(agentChildSpec(agent)));
      started = true;
      tracing.withSpan(SPANS.registryRegister, attributes, () => {
        if (!accepting) throw draining();
        Object.assign(agent.record, store.putAgentWithModule(input, module));
        agent.registered = true;
        agent.accepting = true;
        history.track(agent.id);
      });
    } catch (error) {
      await abandon(agent, started);
      throw error;
    }
    metrics.agentsDeployed.inc();
    lifecycle.release(agent);
    return agent;
  }

  /** A deploy that failed once its agent existed: stopped if it started, what it went through published, forgotten. */
  async function abandon(agent: AgentRuntime, started: boolean): Promise<void> {
    agent.accepting = false;
    try {
      if (started) await terminate(agent.id);
    } catch (error) {
      // Stopping the host took the child along; the deploy's own error is the one to report.
      if (!(error instanceof SupervisorError)) log.error({ agent_id: agent.id, err: error }, 'could not stop an agent whose deploy failed');
    } finally {
      lifecycle.release(agent);
      forget(agent);
    }
  }

  async function restoreOne(record: AgentRecord, admitted: AdmittedModule): Promise<AgentRuntime> {
    if (!accepting) throw draining();
    const agent = track(record, admitted, 'restore');
    await supervisor.startChild(agentChildSpec(agent));
    metrics.agentsDeployed.inc();
    return agent;
  }

  async function restore(): Promise<void> {
    const count = await restoreAgents({
      store,
      admission,
      log,
      accepting: () => accepting,
      start: restoreOne,
      fail: (record, reason) => track(record, undefined, 'restore').fail(reason),
      ...(options.movedAway === undefined ? {} : { movedAway: options.movedAway }),
    });
    if (count > 0) log.info({ agents: count, running: countStates().running }, 'restored stored agents');
  }

  function countStates(): Record<AgentState, number> {
    const counts: Record<AgentState, number> = { starting: 0, running: 0, executing: 0, hibernated: 0, restarting: 0, stopping: 0, stopped: 0, failed: 0 };
    for (const agent of agents.values()) if (agent.registered) counts[agent.visibleState] += 1;
    return counts;
  }

  function get(agentId: string): AgentRuntime | undefined {
    const agent = agents.get(agentId);
    return agent?.registered === true ? agent : undefined;
  }

  /** Stops the agent's child and deletes it from the supervisor; a stored agent that failed to restore has none. */
  async function terminate(agentId: string): Promise<void> {
    try {
      await supervisor.terminateChild(agentId);
      supervisor.deleteChild(agentId);
    } catch (error) {
      if (!(error instanceof SupervisorError && error.code === 'not_found')) throw error;
    }
  }

  /**
   * Killed at any point, the server comes back consistent: before the delete
   * commits, the agent is restored as it was (no answer was given); after it,
   * the agent is gone, whatever was left of its stop.
   */
  async function remove(agentId: string): Promise<void> {
    const agent = get(agentId);
    if (agent === undefined || agent.removing) throw new SvcError('NOT_FOUND', `agent ${agentId} not found`, { agent_id: agentId });
    agent.removing = true;
    try {
      store.deleteAgent(agentId);
    } catch (error) {
      agent.removing = false;
      throw error;
    }
    agent.accepting = false;
    await terminate(agentId);
    // A failed agent has nothing to stop; it leaves now.
    await agent.stop('undeployed');
    forget(agent);
  }

  function cleanUp(): void {
    untapCounting();
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
    logs,
    get accepting() {
      return accepting;
    },
    get size() {
      return agents.size;
    },
    async start() {
      await supervisor.start();
      await restore();
    },
    deploy,
    remove,
    get,
    resolve(agentIdOrName) {
      if (agents.has(agentIdOrName)) return agentIdOrName;
      const id = names.get(agentIdOrName);
      return id !== undefined && get(id) !== undefined ? id : agentIdOrName;
    },
    restart(agentId) {
      if (!accepting) return Promise.reject(draining());
      const agent = get(agentId);
      if (agent === undefined || agent.removing) return Promise.reject(new SvcError('NOT_FOUND', `agent ${agentId} not found`, { agent_id: agentId }));
      // An operator's restart ends an update's probation: what runs next is the operator's choice.
      endCanary(agent, clock);
      return restartAgent(supervisor, agent, countRestart);
    },
    update(agentId, update) {
      if (!accepting) return Promise.reject(draining());
      const agent = get(agentId);
      if (agent === undefined || agent.removing) return Promise.reject(new SvcError('NOT_FOUND', `agent ${agentId} not found`, { agent_id: agentId }));
      return updater.update(agent, update);
    },
    async captureAgent(agentId) {
      return get(agentId)?.captureState();
    },
    async stopAgent(agentId) {
      if (get(agentId) === undefined) return;
      try {
        await supervisor.terminateChild(agentId);
      } catch (error) {
        // A stored agent that failed to restore has no child to stop.
        if (!(error instanceof SupervisorError && error.code === 'not_found')) throw error;
      }
    },
    router,
    deliverForwarded(message) {
      // The sending node knew nothing of a remote receiver's capabilities: its `message:receive` is checked here.
      const receiver = agents.get(message.receiver);
      const fromAgent = !message.sender.startsWith(CLIENT_PREFIX) && message.sender !== PLATFORM_SENDER;
      if (sendPolicy !== undefined && fromAgent && receiver !== undefined && !agentHolds(receiver.record.capabilities, MESSAGE_RECEIVE)) {
        return { ok: false, reason: 'permission_denied', detail: `agent ${receiver.id} lacks ${MESSAGE_RECEIVE}` };
      }
      // Published as sent here too: this node's streams and history show what its agents and clients receive.
      return localRouter.route(message);
    },
    countStates,
    activeAgents() {
      let active = 0;
      for (const agent of agents.values()) if (agent.registered && agent.state !== 'stopped' && agent.state !== 'failed') active += 1;
      return active;
    },
    queuedMessages() {
      let queued = 0;
      for (const agent of agents.values()) queued += agent.mailbox.length;
      return queued;
    },
    queuedBytes: () => memory.queuedBytes,
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
