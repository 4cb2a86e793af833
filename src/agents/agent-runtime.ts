/**
 * One deployed agent on this node, from deploy to undeploy: what is stored
 * about it, its lifecycle machine (agent-machine.ts, the one owner of its
 * lifecycle), its mailbox and counters, and the work its machine invokes
 * (`LifecyclePort`, over the executor pool). The dispatcher's per-message
 * state lives here too, as plain fields, so the hot path touches one object
 * and no map.
 *
 * To the agent supervisor it is a child whose every start (agent-child.ts)
 * is this same agent: `start` sends the machine `start`, the supervisor's
 * decisions go to the machine as they are, and what the machine emits
 * settles the start or reports the exit.
 *
 * A class rather than closures: an instance hosts up to `max_agents` of them
 * (10,000 by default), and prototype methods keep each one small.
 */
import { createActor, type Actor, type SnapshotFrom } from 'xstate';
import { abnormalExit, type ChildDecision, type ChildHandle, type Clock, type StartContext } from '../../supervisors/index.js';
import type { LifecycleEvent } from '../bus/events.js';
import type { AdmittedModule, ExecutorPool, InstanceHandle, InstanceSnapshot } from '../sandbox/types.js';
import type { AgentRecord } from '../store/types.js';
import type { AgentLogLimiter } from '../telemetry/agent-log-limiter.js';
import type { Logger } from '../telemetry/logger.js';
import type { Metrics } from '../telemetry/metrics.js';
import type { Canary, CanaryHolder } from './agent-canary.js';
import { AgentChild, type Stoppable } from './agent-child.js';
import { AgentMailbox } from './agent-mailbox.js';
import { relocate } from './agent-relocate.js';
import { runUpgrade, type UpgradePlan } from './agent-upgrade.js';
import type { MemoryGuard } from './memory-guard.js';
import { agentMachine, visibleState, type AgentMachine, type LifecyclePort, type LifecycleState } from './agent-machine.js';
import type { AgentState } from './agent-service-types.js';
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
  /** 0 disables hibernation. */
  readonly idleTimeoutMs: number;
  readonly startupTimeoutMs: number;
  readonly shutdownTimeoutMs: number;
  readonly mailboxSize: number;
  /** `runtime.mailbox_bytes`. */
  readonly mailboxBytesLimit: number;
  /** The instance-wide budget the mailboxes' bytes count against. */
  readonly memory: MemoryGuard;
  readonly cpuQuotaMillicores: number;
  /** `max_memory_pages` in bytes, as the server runs now. */
  readonly maxMemoryBytes: number;
}

/** How an agent came to be on this node: the reason of its first transition. */
export type AgentOrigin = 'deploy' | 'restore';

export class AgentRuntime extends AgentMailbox implements Schedulable, LifecyclePort, Stoppable, CanaryHolder {
  readonly id: string;
  readonly env: AgentEnvironment;
  /** The stored record; `restartCount` and `updatedAt` are kept current in memory. */
  readonly record: AgentRecord;
  /** Undefined only for a stored agent whose module no longer passes admission (it stays `failed`); an update replaces it. */
  admitted: AdmittedModule | undefined;
  readonly budget: CpuBudget;
  readonly origin: AgentOrigin;
  /** The machine's visible state, cached: read on every routed message. */
  state: LifecycleState = 'starting';
  /** The instance messages run on: set only while the machine is running and not hibernating. */
  instance: InstanceHandle | undefined;
  /** The instance the machine holds in any state (a stop drains it); undefined once released or cut. */
  held: InstanceHandle | undefined;
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
  /** An undeploy has claimed it: a second one is NOT_FOUND. */
  removing = false;
  /** An operator's restart is under way: its stop keeps the mailbox, and messages still queue. */
  restartRequested = false;
  /** The update the machine's `upgrading` state carries out (agent-upgrade.ts). */
  upgradePlan: UpgradePlan | undefined = undefined;
  /** Probation after an update (agent-canary.ts). */
  canary: Canary | undefined = undefined;
  /** State the next start restores instead of starting afresh, taken once: a rollback's, or one another node handed over. */
  pendingRestore: InstanceSnapshot | undefined = undefined;
  messagesReceived = 0;
  messagesSent = 0;
  /** Linear memory of the instance (of its snapshot while hibernated); set through `setMemory`. */
  memoryBytes = 0;

  private readonly actor: Actor<AgentMachine>;
  /** The supervisor's current start. */
  private child: AgentChild | undefined;
  private observed = false;
  private disposed = false;
  /** A drain waiting for the execution in flight. */
  private drained: (() => void) | undefined;
  private stopped: Promise<void> | undefined;
  private markStopped: (() => void) | undefined;
  /** What a move asked by `moveTo` calls when it is over. */
  private relocated: (() => void) | undefined;
  /** The pool's `onLost` for this agent's instances, made once. */
  private readonly lost = (instance: InstanceHandle): void => this.crash(instance, 'worker_lost');

  constructor(env: AgentEnvironment, record: AgentRecord, admitted: AdmittedModule | undefined, origin: AgentOrigin) {
    super(env.mailboxSize, env.mailboxBytesLimit, env.memory);
    this.id = record.agentId;
    this.env = env;
    this.record = record;
    this.admitted = admitted;
    this.origin = origin;
    // Set before the machine starts: its first transition already asks whether to hold the event.
    this.registered = origin !== 'deploy';
    this.accepting = this.registered;
    this.heldEvents = this.registered ? undefined : [];
    const now = env.clock.now();
    this.budget = createCpuBudget(env.cpuQuotaMillicores, now);
    this.lastActiveAt = now;
    const { idleTimeoutMs, startupTimeoutMs, shutdownTimeoutMs } = env;
    this.actor = createActor(agentMachine, { clock: env.machineClock, input: { port: this, origin, idleTimeoutMs, startupTimeoutMs, shutdownTimeoutMs } });
    this.actor.subscribe((snapshot) => this.observe(snapshot));
    this.actor.on('started', () => this.child?.settle());
    this.actor.on('startFailed', ({ exit }) => this.child?.settle(exit));
    this.actor.on('exited', ({ exit }) => this.child?.exited(exit));
    this.actor.on('stopped', () => {
      // A start the supervisor stopped waiting for ends here.
      this.child?.settle(abnormalExit(this.actor.getSnapshot().context.reason));
      // An operator's restart may start the machine again: the next stop waits anew.
      const mark = this.markStopped;
      this.stopped = undefined;
      this.markStopped = undefined;
      mark?.();
    });
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

  /* To the agent supervisor (its child spec, agent-host.ts). */

  /** The supervisor's `start`, for the first start and every restart: resolves once the agent runs. */
  start(context: StartContext): Promise<ChildHandle> {
    const child = new AgentChild(this);
    this.child = child;
    context.signal.addEventListener('abort', () => {
      if (child.starting) this.actor.send({ type: 'stop', reason: String(context.signal.reason) });
    });
    this.actor.send({ type: 'start', reason: context.reason });
    return child.started;
  }

  /** The supervisor's decision about the agent once it is down. */
  decide(decision: ChildDecision): void {
    this.actor.send(decision);
  }

  stop(reason: string): Promise<void> {
    this.actor.send({ type: 'stop', reason });
    return this.whenStopped();
  }

  kill(reason: string): Promise<void> {
    this.actor.send({ type: 'kill', reason });
    return this.whenStopped();
  }

  /* From the host and the dispatcher. */

  /** A stored agent that cannot be admitted any more: listed as failed from the start. */
  fail(reason: string): void {
    this.actor.send({ type: 'fail', reason });
  }

  /** Its sends kept being refused: down for good (`failed`, reason `quarantined`) until an operator restarts it. */
  quarantine(): void {
    this.actor.send({ type: 'quarantine' });
  }

  /** A failed execution on `instance` (ignored when the agent has moved on to another instance since). */
  crash(instance: InstanceHandle, reason: string): void {
    this.actor.send({ type: 'crash', instance, reason });
  }

  /** Hands `plan` to the machine; false when the agent is not running or hibernated (the plan is then not settled). */
  beginUpgrade(plan: UpgradePlan): boolean {
    if (this.upgradePlan !== undefined) return false;
    this.upgradePlan = plan;
    this.actor.send({ type: 'upgrade' });
    const value: unknown = this.actor.getSnapshot().value;
    if (typeof value === 'object' && value !== null && Object.values(value)[0] === 'upgrading') return true;
    this.upgradePlan = undefined;
    return false;
  }

  /** A message waits while the agent is hibernated. */
  wake(): void {
    this.actor.send({ type: 'wake' });
  }

  /**
   * The agent's state for a hand-over to another node: it takes no more
   * messages, finishes those it holds (at most a mailbox's worth), then its
   * instance is snapshotted (or its hibernation snapshot read).
   */
  async captureState(): Promise<InstanceSnapshot | undefined> {
    this.accepting = false;
    for (let i = 0; i <= this.env.mailboxSize && (this.inFlight !== undefined || this.lent || this.mailbox.length > 0); i++) {
      await new Promise<void>((resolve) => (this.drained = resolve));
    }
    const instance = this.instance;
    if (instance !== undefined) return this.env.pool.snapshot(instance);
    return this.actor.getSnapshot().context.snapshot;
  }

  /** The dispatcher settled the execution in flight: a drain waiting for it goes on. */
  executionSettled(): void {
    const drained = this.drained;
    this.drained = undefined;
    drained?.();
  }

  /** Records the instance's memory, and in `svc_wasm_memory_usage_bytes` when it changed. */
  setMemory(bytes: number): void {
    // After dispose the agent's series is gone (`forgetAgent`); a late figure must not bring it back.
    if (bytes === this.memoryBytes || this.disposed) return;
    this.memoryBytes = bytes;
    this.env.metrics.wasmMemory.set({ agent_id: this.id }, bytes);
  }

  /** Stops the machine and its timers; the agent is gone from this node. */
  dispose(): void {
    this.disposed = true;
    this.accepting = false;
    this.actor.stop();
    if (this.throttle !== undefined) this.env.clock.clearTimeout(this.throttle);
    this.throttle = undefined;
    this.clearMailbox();
  }

  /* LifecyclePort: the work the machine invokes. */

  async instantiate(snapshot: InstanceSnapshot | undefined, signal: AbortSignal): Promise<InstanceHandle> {
    const { pool, agentLog } = this.env;
    if (this.admitted === undefined) throw new Error(`agent ${this.id} has no admitted module`);
    const options = { label: this.id, names: [this.id, this.record.name], memoryLimitBytes: this.memoryLimitBytes, onLost: this.lost };
    const state = snapshot ?? this.pendingRestore;
    this.pendingRestore = undefined;
    const placement = await pool.instantiate(this.admitted, state === undefined ? options : { ...options, snapshot: state });
    // A start or wake given up on (a stop, the startup timeout): its instance must not outlive it.
    if (signal.aborted) {
      void pool.release(placement.instance);
      return placement.instance;
    }
    for (const line of placement.log) agentLog.write(this.id, line);
    this.setMemory(placement.memoryBytes);
    // From its first instance on the agent has a throttled series, 0 until its quota holds it back.
    if (!this.disposed) this.env.metrics.agentThrottled.inc({ agent_id: this.id }, 0);
    return placement.instance;
  }

  async hibernate(instance: InstanceHandle, signal: AbortSignal): Promise<InstanceSnapshot> {
    const { pool } = this.env;
    const snapshot = await pool.snapshot(instance);
    await pool.release(instance);
    if (!signal.aborted) this.setMemory(snapshot.memory.byteLength);
    return snapshot;
  }

  async drain(instance: InstanceHandle | undefined): Promise<void> {
    await this.inFlightDone();
    if (instance !== undefined) await this.env.pool.release(instance);
  }

  upgrade(instance: InstanceHandle | undefined, snapshot: InstanceSnapshot | undefined, signal: AbortSignal): Promise<InstanceHandle> {
    return runUpgrade(this, this.lost, instance, snapshot, signal);
  }

  relocate(instance: InstanceHandle, workerId: number, signal: AbortSignal): Promise<InstanceHandle> {
    const done = this.relocated;
    this.relocated = undefined;
    return relocate(this, this.env.pool, this.lost, instance, workerId, signal).finally(done);
  }

  /** Asks the machine to move the agent to executor worker `workerId`; `done` once the move is over, or at once when the machine ignores it. */
  moveTo(workerId: number, done: () => void): void {
    this.relocated = done;
    this.actor.send({ type: 'relocate', workerId });
    if (this.relocated !== undefined) {
      this.relocated = undefined;
      done();
    }
  }

  /** Resolves once no message of the agent is in flight, nor a batch holds it lent. */
  async inFlightDone(): Promise<void> {
    while (this.inFlight !== undefined || this.lent) await new Promise<void>((resolve) => (this.drained = resolve));
  }

  release(instance: InstanceHandle): void {
    void this.env.pool.release(instance);
  }

  idleLeftMs(): number {
    const { idleTimeoutMs, clock } = this.env;
    if (this.inFlight !== undefined || this.lent || this.mailbox.length > 0) return idleTimeoutMs;
    return idleTimeoutMs - (clock.now() - this.lastActiveAt);
  }

  private whenStopped(): Promise<void> {
    const snapshot = this.actor.getSnapshot();
    if (snapshot.status === 'stopped' || snapshot.value === 'stopped') return Promise.resolve();
    this.stopped ??= new Promise<void>((resolve) => (this.markStopped = resolve));
    return this.stopped;
  }

  private observe(snapshot: SnapshotFrom<AgentMachine>): void {
    const value = snapshot.value as string | Record<string, string>;
    const { context } = snapshot;
    this.held = context.instance;
    this.instance = typeof value === 'object' && value['running'] === 'active' ? context.instance : undefined;
    const to = visibleState(value);
    if (to !== undefined && (!this.observed || to !== this.state)) {
      const from = this.observed ? this.state : null;
      this.observed = true;
      this.state = to;
      this.env.hooks.transition(this, from, to, context.reason);
    }
    // Started, woken, or hibernated with mail waiting (which wakes it at once).
    if (this.instance !== undefined || (typeof value === 'object' && value['hibernated'] === 'asleep')) this.env.hooks.ready(this);
  }
}
