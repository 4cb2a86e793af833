/**
 * One deployed agent on this node, from deploy to undeploy: what is stored
 * about it, its lifecycle machine, its mailbox, its counters, and its
 * current incarnation (agent-incarnation.ts: one start, replaced on every
 * restart). The dispatcher's per-message state lives here too, as plain
 * fields, so the hot path touches one object and no map.
 *
 * A class rather than closures: an instance hosts up to `max_agents` of them
 * (10,000 by default), and prototype methods keep each one small.
 */
import type { Span } from '@opentelemetry/api';
import { createActor, type Actor, type SnapshotFrom } from 'xstate';
import type { Clock, TimerHandle } from '../../supervisors/index.js';
import type { LifecycleEvent } from '../bus/events.js';
import type { Message } from '../bus/message.js';
import { createRingBuffer, type RingBuffer } from '../bus/ring-buffer.js';
import type { AdmittedModule, ExecutionResult, ExecutorPool } from '../sandbox/types.js';
import type { AgentRecord } from '../store/types.js';
import type { AgentLogLimiter } from '../telemetry/agent-log-limiter.js';
import type { Logger } from '../telemetry/logger.js';
import type { Metrics } from '../telemetry/metrics.js';
import type { AgentState } from './agent-service-types.js';
import { agentMachine, type AgentMachine, type AgentMachineEvent, type LifecycleState } from './agent-machine.js';
import type { Incarnation } from './agent-incarnation.js';
import { createCpuBudget, type CpuBudget } from './cpu-budget.js';
import type { Schedulable } from './ready-queue.js';

/** What the host does when an agent changes; implemented by agent-host.ts. */
export interface AgentHooks {
  /** Every state change of the machine, the first one (`from` null) included: log line, bus event, counts. */
  transition(agent: AgentRuntime, from: LifecycleState | null, to: LifecycleState, reason: string): void;
  /** The agent can run again (started, woken, unthrottled): dispatch what waits in its mailbox. */
  ready(agent: AgentRuntime): void;
}

/** Shared by every agent of a host. */
export interface AgentEnvironment {
  readonly pool: ExecutorPool;
  readonly clock: Clock;
  /** The machines' clock: the same time, but its timers fire outside any trace (detached-clock.ts). */
  readonly machineClock: Clock;
  readonly log: Logger;
  readonly metrics: Metrics;
  /** Takes the agents' fd 2 lines, rate-limited per agent. */
  readonly agentLog: AgentLogLimiter;
  readonly hooks: AgentHooks;
  readonly idleTimeoutMs: number;
  readonly mailboxSize: number;
  readonly cpuQuotaMillicores: number;
  /** `max_memory_pages` in bytes, as the server runs now. */
  readonly maxMemoryBytes: number;
}

/** How an agent came to be on this node: the reason of its first transition. */
export type AgentOrigin = 'deploy' | 'restore';

export class AgentRuntime implements Schedulable {
  readonly id: string;
  readonly env: AgentEnvironment;
  /** The stored record; `restartCount` and `updatedAt` are kept current in memory. */
  readonly record: AgentRecord;
  /** Undefined only for a stored agent whose module no longer passes admission (it stays `failed`). */
  readonly admitted: AdmittedModule | undefined;
  readonly mailbox: RingBuffer<Message>;
  /** `clock.now()` when each mailbox message was accepted, in step with `mailbox`, for the processing time. */
  readonly arrivals: RingBuffer<number>;
  readonly budget: CpuBudget;
  readonly origin: AgentOrigin;
  /** The machine's state, cached: read on every routed message. */
  state: LifecycleState = 'starting';
  /**
   * Visible on this node: routed to, listed, counted. A deployed agent is
   * registered once its first start succeeded and its record is durable
   * (agent-host.ts `deploy`); a restored one from the start.
   */
  registered: boolean;
  /** Lifecycle events of a deploy not yet registered, published when it is (lifecycle-events.ts). */
  heldEvents: LifecycleEvent[] | undefined;
  /** False until registered and once undeploy began: the router treats the agent as gone. */
  accepting: boolean;
  incarnation: Incarnation | undefined;
  /** Undeploy in progress, so a second undeploy waits for the same one. */
  removing: Promise<void> | undefined;
  messagesReceived = 0;
  messagesSent = 0;
  /** Linear memory of the instance (of its snapshot while hibernated); set through `setMemory`. */
  memoryBytes = 0;

  /* The dispatcher's fields (dispatcher.ts). */
  /** The message being handled; one at a time. */
  inFlight: Message | undefined = undefined;
  /** When it was accepted. */
  inFlightSince = 0;
  /** The incarnation handling it: a result that comes back after a restart or a kill belongs to this one. */
  inFlightOn: Incarnation | undefined = undefined;
  /** Its `svc.agent.execute` span, when its trace is recorded (message-trace.ts). */
  inFlightSpan: Span | undefined = undefined;
  /** The dispatcher's result callbacks for this agent, made once. */
  settled: ((result: ExecutionResult) => void) | undefined = undefined;
  refused: ((error: unknown) => void) | undefined = undefined;
  vtime = 0;
  /** In the dispatcher's backlog. */
  queued = false;
  /** Set while the agent waits out its CPU quota. */
  throttle: TimerHandle | undefined = undefined;
  throttledCount = 0;
  /** `clock.now()` of the last dispatch or result, for the idle timer. */
  lastActiveAt: number;

  private readonly actor: Actor<AgentMachine>;
  private observed = false;
  private instances = 0;
  private disposed = false;

  constructor(env: AgentEnvironment, record: AgentRecord, admitted: AdmittedModule | undefined, origin: AgentOrigin) {
    this.id = record.agentId;
    this.env = env;
    this.record = record;
    this.admitted = admitted;
    this.origin = origin;
    // Set before the machine starts: its first transition already asks whether to hold the event.
    this.registered = origin !== 'deploy';
    this.accepting = this.registered;
    this.heldEvents = this.registered ? undefined : [];
    this.mailbox = createRingBuffer<Message>(env.mailboxSize);
    this.arrivals = createRingBuffer<number>(env.mailboxSize);
    const now = env.clock.now();
    this.budget = createCpuBudget(env.cpuQuotaMillicores, now);
    this.lastActiveAt = now;
    this.actor = createActor(agentMachine, { clock: env.machineClock, input: { idleTimeoutMs: env.idleTimeoutMs, reason: origin } });
    this.actor.subscribe((snapshot) => this.observe(snapshot));
    this.actor.on('idle', () => this.idle());
    this.actor.start();
  }

  get shares(): number {
    return this.record.resources.cpuShares;
  }

  /**
   * The memory limit the agent runs under: its stored `memory_limit`, but never
   * above `max_memory_pages` as the server runs now. A limit stored under a
   * higher maximum (the operator lowered it since) is kept in the store, so
   * the agent has it back if the maximum is raised again.
   */
  get memoryLimitBytes(): number {
    return Math.min(this.record.resources.memoryLimit, this.env.maxMemoryBytes);
  }

  /** The state clients see: `executing` while a message is being handled. */
  get visibleState(): AgentState {
    return this.state === 'running' && this.inFlight !== undefined ? 'executing' : this.state;
  }

  send(event: AgentMachineEvent): void {
    this.actor.send(event);
  }

  /** Records the instance's memory, and in `svc_wasm_memory_usage_bytes` when it changed. */
  setMemory(bytes: number): void {
    // After dispose the agent's series is gone (`forgetAgent`); a late figure must not bring it back.
    if (bytes === this.memoryBytes || this.disposed) return;
    this.memoryBytes = bytes;
    this.env.metrics.wasmMemory.set({ agent_id: this.id }, bytes);
  }

  /**
   * The executor pool's name for the next instance: `<agent id>#<n>`, new for
   * every instantiation, so an abandoned start or a release still queued
   * behind a long execution can never be confused with its successor.
   */
  nextInstanceKey(): string {
    this.instances += 1;
    return `${this.id}#${this.instances}`;
  }

  /** Stops the machine and its timers; the agent is gone from this node. */
  dispose(): void {
    this.disposed = true;
    this.accepting = false;
    this.actor.stop();
    if (this.throttle !== undefined) this.env.clock.clearTimeout(this.throttle);
    this.throttle = undefined;
    this.mailbox.clear();
    this.arrivals.clear();
  }

  private observe(snapshot: SnapshotFrom<AgentMachine>): void {
    const to = snapshot.value as LifecycleState;
    if (this.observed && to === this.state) return;
    const from = this.observed ? this.state : null;
    this.observed = true;
    this.state = to;
    this.env.hooks.transition(this, from, to, snapshot.context.reason);
  }

  /** The machine's idle timer fired: hibernate, or re-arm it for what is left since the last message. */
  private idle(): void {
    const { idleTimeoutMs, clock } = this.env;
    const incarnation = this.incarnation;
    if (incarnation?.phase !== 'up' || this.inFlight !== undefined || this.mailbox.length > 0) {
      this.actor.send({ type: 'ACTIVE', delayMs: idleTimeoutMs });
      return;
    }
    const left = idleTimeoutMs - (clock.now() - this.lastActiveAt);
    if (left > 0) this.actor.send({ type: 'ACTIVE', delayMs: left });
    else incarnation.hibernate();
  }
}
