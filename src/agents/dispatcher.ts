/**
 * The per-message path, beside the lifecycle machines: from an agent's
 * mailbox to an execution in the executor pool, and from its output lines to
 * the router. No XState transition and no SQLite write happens per message.
 *
 * - **One message at a time per agent.** An agent with a message in flight is
 *   not dispatched again until its result is in.
 * - **Many agents at once.** Dispatch is synchronous (`pool.execute` called at
 *   once), and the pool gathers every call made in one turn of the event loop
 *   into one batch per worker: the results of one batch route their outputs,
 *   which dispatch the receivers, which fill the next batch.
 * - **`max_concurrent_executions`** bounds the executions in flight. Agents
 *   that find no slot wait in the backlog, ordered by **weighted fair
 *   queueing**: each agent's virtual time grows by the fuel its executions
 *   burned divided by its `cpu_shares`, and the lowest goes first, so under
 *   contention agents receive CPU in proportion to their shares. Fuel rather
 *   than wall time: one execution stretched by a GC pause or a busy machine
 *   would otherwise push its agent back for many turns. An agent
 *   that becomes ready after being idle starts at the system's virtual time
 *   (that of the last dispatch), so idleness is not banked as credit.
 * - **`cpu_quota_per_agent`** (cpu-budget.ts): an agent over its quota waits
 *   on a timer until it is under again. It is delayed, never killed, and the
 *   others run meanwhile.
 * - **Failures.** A failed execution is a crash of the instance it ran on
 *   (the pool discards the instance after any failure; the agent's machine
 *   ignores a crash of an instance it no longer holds) and its sender gets a
 *   FIPA `failure`. An execution the pool refused (too many pending, closed)
 *   is no crash, but its sender is told all the same. An output line that is
 *   not a message is counted, not a crash. A message the router refuses gets
 *   a `failure` to its sender, and so does one its sender or receiver lacks
 *   the permission for (`checkSend`); a sender refused too often is
 *   quarantined (DESIGN.md section 9).
 * - **Worker-local delivery.** A batch borrows idle agents of its worker
 *   (agent-lender.ts); messages between them run there as hops
 *   (sandbox/worker-local.ts), and each comes back in its sender's result:
 *   `replayHop` does for it what routing and `dispatch` do, in order, and the
 *   hop's own result settles as any. Agents that talk across workers are
 *   moved together (co-location.ts).
 * - **Traces.** An execution continues the trace of the message it handles
 *   and the messages it sends continue it (message-trace.ts); spans are made
 *   only when that trace is recorded.
 */
import { canaryHandled } from './agent-canary.js';
import { context, ROOT_CONTEXT, type Span } from '@opentelemetry/api';
import type { MessageBus } from '../bus/bus.js';
import { completeMessage, type FailureReason, type Message } from '../bus/message.js';
import type { IdGenerator } from '../bus/message-id.js';
import type { Clock } from '../../supervisors/index.js';
import { encodeIncoming, parseOutputAround } from '../sandbox/abi.js';
import type { ExecutionFailure, ExecutionResult, ExecutorPool, InstanceHandle } from '../sandbox/types.js';
import type { AgentLogLimiter } from '../telemetry/agent-log-limiter.js';
import type { Logger } from '../telemetry/logger.js';
import type { Metrics } from '../telemetry/metrics.js';
import { createAgentLender } from './agent-lender.js';
import { createCoLocation } from './co-location.js';
import type { MessageTrace } from './message-trace.js';
import type { MetricTally } from './metric-tally.js';
import type { AgentRuntime } from './agent-runtime.js';
import { describeError } from './exit-reason.js';
import { createReadyQueue } from './ready-queue.js';
import { CLIENT_PREFIX, type RouteOutcome } from './router.js';

export interface DispatcherOptions {
  pool: ExecutorPool;
  bus: MessageBus;
  clock: Clock;
  log: Logger;
  metrics: Metrics;
  tally: MetricTally;
  agentLog: AgentLogLimiter;
  messageTrace: MessageTrace;
  /** `max_concurrent_executions`. */
  maxInFlight: number;
  /** The server's id generator, for the messages agents send. */
  newId: IdGenerator;
  /** The router; `published` says the message is already on the bus (a platform failure). */
  route(message: Message, published?: boolean): RouteOutcome;
  /** Whether an agent may send `message` (its capabilities and the receiver's); everything may when unset. */
  checkSend?(agent: AgentRuntime, message: Message): SendCheck;
  /** Worker-local delivery (agent-lender.ts); off when unset or its hops are 0. */
  local?: LocalDeliveryOptions;
}

export interface LocalDeliveryOptions {
  /** `runtime.local_delivery_hops`. */
  hops: number;
  traced(): boolean;
  agentOf(id: string): AgentRuntime | undefined;
  mayLend(agent: AgentRuntime): boolean;
}

/** A send refused for the permission `agentId` (the sender or the receiver) lacks; `quarantine` when the refusals say the sender is to be quarantined. */
export type SendCheck = { readonly allowed: true } | { readonly allowed: false; readonly permission: string; readonly agentId: string; readonly quarantine: boolean };

export interface DispatcherStats {
  inFlight: number;
  backlog: number;
  executions: number;
  /** Failed executions by kind; each was a crash of its agent, but the pool's refusals (`overloaded`, `closed`). */
  failures: Partial<Record<ExecutionFailure, number>>;
  messagesDelivered: number;
  messagesSent: number;
  /** Output lines that were not messages. */
  outputLineErrors: number;
  /** Times an agent was held back by its CPU quota. */
  throttled: number;
  /** Execution time of all agents, ns. */
  cpuNs: number;
  /** Agents moved to the worker of an agent they talk to (co-location.ts). */
  moves: number;
}

export interface Dispatcher {
  /** The agent may have work: dispatch it now, queue it for a slot, or leave it until it can run. */
  ready(agent: AgentRuntime): void;
  /** Tells the sender of `message` it could not be delivered or handled (a FIPA `failure`), and counts it. */
  undeliverable(message: Message, reason: FailureReason, detail?: string): void;
  stats(): DispatcherStats;
}

/** The pool did not run the call: no crash of the agent. */
const isRefusal = (failure: ExecutionFailure): boolean => failure === 'overloaded' || failure === 'closed';

export function createDispatcher(options: DispatcherOptions): Dispatcher {
  const { pool, bus, clock, log, metrics, tally, agentLog, messageTrace, maxInFlight, route, checkSend, newId, local } = options;
  /** A reading of the clock as a span time (epoch milliseconds); only the real clock has one (supervisors/clock.ts). */
  const origin = clock.timeOrigin;
  const spanTime = (now: number): number | undefined => (origin === undefined ? undefined : origin + now);
  const backlog = createReadyQueue<AgentRuntime>();
  const failures: DispatcherStats['failures'] = {};
  const counters = { executions: 0, messagesDelivered: 0, messagesSent: 0, outputLineErrors: 0, throttled: 0, cpuNs: 0 };
  let inFlight = 0;
  /** The system's virtual time: the start tag of the last dispatch. */
  let vnow = 0;

  /** Whether the agent can take its next message now; on the way, wakes it or starts waiting out its quota. */
  function runnable(agent: AgentRuntime): agent is AgentRuntime & { instance: InstanceHandle } {
    if (agent.inFlight !== undefined || agent.lent || agent.throttle !== undefined || agent.mailbox.length === 0) return false;
    if (agent.instance === undefined) {
      // Starting, restarting and stopping agents are called again when that changes.
      if (agent.state === 'hibernated') agent.wake();
      return false;
    }
    const now = clock.now();
    const at = agent.budget.readyAt(now);
    if (at <= now) return true;
    counters.throttled += 1;
    agent.throttledCount += 1;
    // Counted when the wait is decided, so GetAgent shows a throttled agent at once, not after its wait.
    agent.throttledMs += at - now;
    metrics.agentThrottled.inc({ agent_id: agent.id }, (at - now) / 1000);
    agent.throttle = clock.setTimeout(() => {
      agent.throttle = undefined;
      ready(agent);
    }, at - now);
    return false;
  }

  function ready(agent: AgentRuntime): void {
    if (agent.queued || !runnable(agent)) return;
    if (agent.vtime < vnow) agent.vtime = vnow;
    // Straight to a free slot only when nobody waits for one: otherwise the backlog's order decides.
    if (inFlight < maxInFlight && backlog.length === 0) dispatch(agent, agent.instance);
    else {
      agent.queued = true;
      backlog.push(agent);
      drain();
    }
  }

  function dispatch(agent: AgentRuntime, instance: InstanceHandle): void {
    const message = agent.takeMessage()!;
    agent.inFlight = message;
    // One reading of the clock for the agent's bookkeeping and the execution's span: each reading costs the message path.
    const now = clock.now();
    agent.inFlightSince = agent.arrivals.shift() ?? now;
    agent.inFlightOn = instance;
    agent.messagesReceived += 1;
    tally.received(message.message_type);
    agent.lastActiveAt = now;
    inFlight += 1;
    counters.messagesDelivered += 1;
    if (agent.vtime > vnow) vnow = agent.vtime;
    bus.publishMessage('delivered', message);
    // One callback per agent, made at its first dispatch, rather than a closure per message. It runs outside any
    // trace: the context active now is that of whatever made the agent ready, and would pass on from result to
    // dispatch to result; each step that belongs to a trace names it (message-trace.ts).
    agent.inFlightSpan = messageTrace.startExecution(agent.id, message, spanTime(now));
    pool.execute(instance, encodeIncoming(message), settledOf(agent));
  }

  function settle(agent: AgentRuntime, result: ExecutionResult): void {
    const message = agent.inFlight;
    // A hop whose message was not replayed: its sender's result never reached this thread (a worker lost with it).
    if (message === undefined) return;
    const instance = agent.inFlightOn!;
    const span = agent.inFlightSpan;
    const refused = !result.ok && isRefusal(result.failure);
    inFlight -= 1;
    agent.inFlight = undefined;
    agent.inFlightOn = undefined;
    agent.inFlightSpan = undefined;
    const now = clock.now();
    agent.lastActiveAt = now;
    agent.budget.charge(now, result.durationNs);
    agent.vtime += Number(result.fuelUsed) / agent.shares;
    counters.executions += 1;
    counters.cpuNs += result.durationNs;
    if (!refused) {
      tally.executed(result.ok ? 'success' : 'error');
      metrics.agentExecutionDuration.observe(result.durationNs / 1e9);
      metrics.messageProcessingDuration.observe((now - agent.inFlightSince) / 1000);
    }
    // The execution's span ends with its result; the messages it wrote are routed after (message-trace.ts).
    if (span !== undefined) messageTrace.endExecution(span, result, spanTime(now));
    // What an execution causes besides messages (log lines, a crash) happens in its trace; the context is
    // only made for that, never for an execution that just answers (message-trace.ts).
    if (result.stderr.length > 0) {
      context.with(messageTrace.executionContext(message, span), () => {
        for (const line of result.stderr) agentLog.write(agent.id, line);
      });
    }
    if (refused) {
      failures[result.failure] = (failures[result.failure] ?? 0) + 1;
      undeliverable(message, 'execution_crashed', result.message);
    } else if (!result.ok) {
      failures[result.failure] = (failures[result.failure] ?? 0) + 1;
      undeliverable(message, 'execution_crashed', `${result.failure}: ${result.message}`);
      const reason = `${result.failure}: ${describeError(result.message)}`;
      context.with(messageTrace.executionContext(message, span), () => agent.crash(instance, reason));
    } else if (agent.held !== instance) {
      // Cut by a kill, or lost with its worker while the result was on its way. What its worker delivered was handled all the same.
      undeliverable(message, 'execution_crashed', 'the agent was stopped before its execution finished');
      for (const [, json] of result.local ?? []) {
        agent.messagesSent += 1;
        counters.messagesSent += 1;
        replayHop(agent, JSON.parse(json) as Message);
      }
    } else {
      agent.setMemory(result.memoryBytes);
      if (agent.canary !== undefined) canaryHandled(agent, clock);
      if (result.stdout.length > 0) output(agent, message, span, result.stdout, result.local);
    }
    agent.executionSettled();
    ready(agent);
    drain();
  }

  function output(agent: AgentRuntime, incoming: Message, span: Span | undefined, lines: string[], delivered: ExecutionResult['local']): void {
    const { messages, errors } = parseOutputAround(lines, delivered, incoming, agent.id);
    if (errors.length > 0) {
      counters.outputLineErrors += errors.length;
      const fields = { agent_id: agent.id, errors: errors.length, first: errors[0] };
      context.with(messageTrace.executionContext(incoming, span), () => log.warn(fields, 'agent wrote output lines that are not messages'));
    }
    let quarantine = false;
    for (const draft of messages) {
      agent.messagesSent += 1;
      counters.messagesSent += 1;
      if (typeof draft === 'string') {
        replayHop(agent, JSON.parse(draft) as Message);
        continue;
      }
      const message = completeMessage(draft, { newId });
      const check = checkSend?.(agent, message);
      if (check !== undefined && !check.allowed) {
        quarantine ||= check.quarantine;
        undeliverable(message, 'permission_denied', `agent ${check.agentId} lacks ${check.permission}`);
        continue;
      }
      const outcome = messageTrace.sendFromAgent(message, incoming, span, route);
      if (!outcome.ok) undeliverable(message, outcome.reason, outcome.detail);
      else if (coLocation !== undefined) talked(agent, message.receiver);
    }
    if (quarantine) {
      log.warn({ agent_id: agent.id, reason: 'quarantined' }, 'agent quarantined: its sends kept being refused');
      agent.quarantine();
    }
  }

  function talked(sender: AgentRuntime, receiver: string): void {
    sender.lastPeer = receiver;
    const peer = local!.agentOf(receiver);
    if (peer !== undefined) coLocation!.talked(sender, peer);
  }

  /**
   * A message the worker delivered to a borrowed agent (agent-lender.ts): what routing and
   * dispatch would have done on this thread, in the same order; its result comes as the hop's.
   */
  function replayHop(sender: AgentRuntime, message: Message): void {
    sender.lastPeer = message.receiver;
    bus.publishMessage('sent', message);
    const agent = local!.agentOf(message.receiver)!;
    const now = clock.now();
    agent.inFlight = message;
    agent.inFlightSince = now;
    agent.inFlightOn = agent.lentOn;
    agent.messagesReceived += 1;
    tally.received(message.message_type);
    agent.lastActiveAt = now;
    inFlight += 1;
    counters.messagesDelivered += 1;
    bus.publishMessage('delivered', message);
    agent.inFlightSpan = messageTrace.startExecution(agent.id, message, spanTime(now));
  }

  /** Binds `settle` to the agent, outside any trace (see `dispatch`). */
  const settledOf = (agent: AgentRuntime): ((result: ExecutionResult) => void) =>
    (agent.settled ??= context.bind(ROOT_CONTEXT, (result: ExecutionResult) => settle(agent, result)));

  function undeliverable(message: Message, reason: FailureReason, detail?: string): void {
    metrics.messageErrors.inc({ message_type: message.message_type });
    const failure = bus.reportFailure(message, reason, detail);
    // Clients read failures from the bus; an agent gets one in its mailbox. A failure refused in turn is
    // dropped: failures are never answered, so two agents cannot bounce them forever.
    if (failure !== undefined && !failure.receiver.startsWith(CLIENT_PREFIX)) route(failure, true);
  }

  /** Gives free slots to the agents that waited for one, lowest virtual time first. */
  function drain(): void {
    while (inFlight < maxInFlight && backlog.length > 0) {
      const agent = backlog.pop()!;
      agent.queued = false;
      if (runnable(agent)) dispatch(agent, agent.instance);
    }
  }

  const coLocation = local !== undefined && local.hops > 0 ? createCoLocation(pool, clock) : undefined;
  if (coLocation !== undefined) {
    const returned = (agent: AgentRuntime): void => {
      agent.lent = false;
      agent.lentOn = undefined;
      agent.executionSettled();
      ready(agent);
    };
    pool.lendWith(createAgentLender({ ...local!, clock, settled: settledOf, returned }));
  }

  return {
    ready,
    undeliverable,
    stats: () => ({ ...counters, inFlight, backlog: backlog.length, failures: { ...failures }, moves: coLocation?.moves ?? 0 }),
  };
}
