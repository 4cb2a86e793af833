/**
 * An OTP-style supervisor: starts its children, watches their exits,
 * restarts them by their restart type and the strategy, with backoff, within
 * the restart intensity, and stops them in order. It is a `ChildHandle`
 * itself, so supervisors nest into a tree; giving up is an abnormal exit its
 * own supervisor sees as a crash.
 *
 * Built for thousands of dynamic children (agents): per child one record and
 * one instance; a crash under `one_for_one` does O(1) work; counts are kept
 * as children change state, never by scanning.
 */
import { backoffDelay } from './backoff.js';
import type { TimerHandle } from './clock.js';
import { ChildInstance, type ShutdownResult } from './child-instance.js';
import { decisionFor } from './child-decision.js';
import { resolveChildSpec, shouldRestart, type ChildSpec, type ResolvedChildSpec, type StartReason } from './child-spec.js';
import { SupervisorError } from './errors.js';
import { createListenerSet, type ChildState, type ChildTransition, type TransitionListener } from './events.js';
import { abnormalExit, createExitSignal, normalExit, type ChildExit, type ExitListener } from './exit-signal.js';
import { exceedsIntensity, recordRestart } from './intensity.js';
import { planRestart } from './restart-plan.js';
import type { ChildCounts, ChildInfo, Supervisor, SupervisorState } from './supervisor-api.js';
import { resolveSupervisorOptions, type ResolvedSupervisorOptions, type SupervisorOptions } from './supervisor-options.js';

interface ChildRecord {
  readonly spec: ResolvedChildSpec;
  state: ChildState | null;
  /** The current start; kept while it is being shut down, so a second stop waits for the same one. */
  instance: ChildInstance | undefined;
  restarts: number;
  /** Restart times within the intensity period; made at the first crash. */
  history: number[] | undefined;
  /** The restart this child is waiting in, if any. */
  group: RestartGroup | undefined;
  terminating: Promise<void> | undefined;
}

/** Children restarting together: stopped siblings first, then the backoff, then starts in order. */
interface RestartGroup {
  readonly members: ChildRecord[];
  timer: TimerHandle | undefined;
}

export function createSupervisor(options: SupervisorOptions): Supervisor {
  return new SupervisorImpl(resolveSupervisorOptions(options));
}

/** A spec that runs a fresh supervisor at every start: OTP's supervisor child, with an unbounded shutdown. */
export function supervisorSpec(options: SupervisorOptions, spec: Partial<Omit<ChildSpec, 'id' | 'start'>> = {}): ChildSpec {
  return { kind: 'supervisor', ...spec, id: options.id, start: () => createSupervisor(options).start() };
}

// Declared boolean, not a type guard: a narrowed state would outlive the awaits after which it is re-read.
const isDown = (state: ChildState | null): boolean => state === 'stopped' || state === 'failed';

class SupervisorImpl implements Supervisor {
  state: SupervisorState = 'idle';
  private readonly options: ResolvedSupervisorOptions;
  private readonly records = new Map<string, ChildRecord>();
  private readonly counts: Record<ChildState, number> = { starting: 0, running: 0, restarting: 0, stopping: 0, stopped: 0, failed: 0 };
  private readonly listeners = createListenerSet<ChildTransition>();
  private readonly exitSignal = createExitSignal();
  /** Restart times of all children, for `intensityScope: 'supervisor'`. */
  private readonly history: number[] = [];
  private readonly groups = new Set<RestartGroup>();
  private stopping: Promise<void> | undefined;
  private killing = false;
  private readonly ids = () => this.records.keys();
  private readonly lookup = (id: string) => this.records.get(id);

  constructor(options: ResolvedSupervisorOptions) {
    this.options = options;
  }

  get id(): string {
    return this.options.id;
  }

  async start(): Promise<Supervisor> {
    if (this.state !== 'idle') throw new Error(`supervisor "${this.id}" was already started`);
    this.state = 'starting';
    for (const spec of this.options.children) {
      const record = this.add(spec);
      const failure = await this.startRecord(record, 'start');
      if (this.state !== 'starting') {
        await this.stopping;
        const reason = this.exitSignal.exited?.reason ?? 'shutdown';
        throw this.error('not_running', `supervisor "${this.id}" stopped (${reason}) while starting its children`);
      }
      if (failure) {
        this.setState(record, 'stopped', failure.reason);
        const error = this.error('start_failed', `supervisor "${this.id}": child "${spec.id}" failed to start: ${failure.reason}`, spec.id, failure.error);
        await this.shutdown('shutdown', abnormalExit('start_failed', error));
        throw error;
      }
    }
    this.state = 'running';
    return this;
  }

  async startChild(input: ChildSpec): Promise<ChildInfo> {
    const spec = resolveChildSpec(input);
    this.assertRunning();
    if (this.records.has(spec.id)) throw this.error('already_exists', `supervisor "${this.id}" already has a child "${spec.id}"`, spec.id);
    const record = this.add(spec);
    const failure = await this.startRecord(record, 'start');
    if (failure) {
      this.setState(record, 'stopped', failure.reason);
      this.remove(record);
      throw this.error('start_failed', `child "${spec.id}" failed to start: ${failure.reason}`, spec.id, failure.error);
    }
    return this.info(record);
  }

  async terminateChild(id: string): Promise<void> {
    const record = this.find(id);
    if (isDown(record.state) && !record.terminating) return;
    record.terminating ??= this.terminate(record);
    await record.terminating;
  }

  async restartChild(id: string): Promise<ChildInfo> {
    this.assertRunning();
    const record = this.find(id);
    if (!isDown(record.state)) throw this.error('running', `child "${id}" is ${String(record.state)}; stop it first`, id);
    record.history = undefined;
    const failure = await this.startRecord(record, 'restart_requested');
    if (failure) {
      this.setState(record, 'stopped', failure.reason);
      throw this.error('start_failed', `child "${id}" failed to start: ${failure.reason}`, id, failure.error);
    }
    return this.info(record);
  }

  deleteChild(id: string): void {
    const record = this.find(id);
    if (!isDown(record.state)) throw this.error('running', `child "${id}" is ${String(record.state)}; terminate it first`, id);
    this.remove(record);
  }

  getChild(id: string): ChildInfo | undefined {
    const record = this.records.get(id);
    return record && this.info(record);
  }

  whichChildren(): ChildInfo[] {
    return Array.from(this.records.values(), (record) => this.info(record));
  }

  countChildren(): ChildCounts {
    return { specs: this.records.size, ...this.counts };
  }

  on(listener: TransitionListener): () => void {
    return this.listeners.add(listener);
  }

  onExit(listener: ExitListener): () => void {
    return this.exitSignal.onExit(listener);
  }

  stop(reason = 'shutdown'): Promise<void> {
    return this.shutdown(reason, normalExit('shutdown'));
  }

  kill(reason = 'killed'): Promise<void> {
    this.killing = true;
    // A stop in progress waits on graceful stops; cut them short.
    if (this.stopping) for (const record of this.records.values()) void record.instance?.kill(reason);
    return this.shutdown(reason, abnormalExit('killed'));
  }

  private async startRecord(record: ChildRecord, reason: StartReason): Promise<ChildExit | undefined> {
    const instance = new ChildInstance(record.spec, this.options.clock, (crashed, exit) => this.handleCrash(record, crashed, exit));
    record.instance = instance;
    this.setState(record, 'starting', reason);
    const failure = await instance.start({ id: record.spec.id, restarts: record.restarts, reason });
    // Superseded while starting: crashed at once, terminated, or the supervisor is stopping.
    if (record.instance !== instance || record.state !== 'starting') return undefined;
    if (failure) {
      record.instance = undefined;
      return failure;
    }
    this.setState(record, 'running', 'started');
    return undefined;
  }

  private handleCrash(record: ChildRecord, instance: ChildInstance, exit: ChildExit): void {
    if (record.instance !== instance || !this.supervising()) return;
    record.instance = undefined;
    if (shouldRestart(record.spec.restart, exit)) {
      this.restart(record, exit.reason);
      return;
    }
    this.setState(record, 'stopped', exit.reason);
    if (record.spec.restart === 'temporary') this.remove(record);
  }

  private restart(record: ChildRecord, reason: string): void {
    const { clock, intensity, intensityScope, backoff, random, strategy } = this.options;
    const now = clock.now();
    record.history ??= [];
    const attempt = recordRestart(record.history, now, intensity);
    const total = intensityScope === 'child' ? attempt : recordRestart(this.history, now, intensity);
    if (exceedsIntensity(total, intensity)) {
      record.group = undefined;
      this.setState(record, 'failed', `reached_max_restart_intensity: ${reason}`);
      if (intensityScope === 'supervisor') this.giveUp(record, reason);
      return;
    }
    record.restarts += 1;
    const delayMs = backoffDelay(attempt, backoff, random);
    const plan = planRestart(strategy, record.spec.id, this.ids, this.lookup);
    const group: RestartGroup = { members: [], timer: undefined };
    for (const id of plan.start) {
      const member = this.records.get(id)!;
      member.group = group;
      group.members.push(member);
    }
    this.groups.add(group);
    this.setState(record, 'restarting', reason, attempt, delayMs);

    const why = `sibling_restart: ${record.spec.id}`;
    const siblings = plan.stop.map((id) => this.records.get(id)!);
    for (const sibling of siblings) {
      if (sibling.group === group) this.setState(sibling, 'restarting', why, undefined, delayMs);
      else this.setState(sibling, 'stopping', why);
    }
    // Members taken over from an earlier group may still be shutting down.
    for (const member of group.members) if (member !== record && member.instance && member.state === 'restarting') siblings.push(member);
    if (siblings.length === 0) this.arm(group, delayMs);
    else void this.stopSiblings(group, siblings, why, delayMs);
  }

  private async stopSiblings(group: RestartGroup, siblings: ChildRecord[], reason: string, delayMs: number): Promise<void> {
    const stopOne = async (sibling: ChildRecord) => {
      const result = await this.shutdownRecord(sibling, reason, false);
      // Siblings not restarting (temporary ones) end here unless someone else took them over.
      if (sibling.state === 'stopping' && !sibling.terminating && this.supervising()) this.settleStopped(sibling, result.reason);
    };
    if (this.options.shutdownOrder === 'ordered') for (const sibling of siblings) await stopOne(sibling);
    else await Promise.all(siblings.map(stopOne));
    if (this.groups.has(group)) this.arm(group, delayMs);
  }

  private arm(group: RestartGroup, delayMs: number): void {
    group.timer = this.options.clock.setTimeout(() => {
      group.timer = undefined;
      void this.runGroup(group);
    }, delayMs);
  }

  private async runGroup(group: RestartGroup): Promise<void> {
    for (const member of group.members) {
      if (member.group !== group || !this.supervising()) continue;
      member.group = undefined;
      const failure = await this.startRecord(member, 'restart');
      // A failed restart counts as one more crash.
      if (failure && this.supervising()) this.restart(member, failure.reason);
    }
    this.groups.delete(group);
  }

  private giveUp(record: ChildRecord, reason: string): void {
    const { maxRestarts, periodMs } = this.options.intensity;
    const error = this.error(
      'reached_max_restart_intensity',
      `supervisor "${this.id}" gave up: more than ${maxRestarts} restarts within ${periodMs} ms, the last of "${record.spec.id}" (${reason})`,
      record.spec.id,
    );
    void this.shutdown('reached_max_restart_intensity', abnormalExit('reached_max_restart_intensity', error));
  }

  private async terminate(record: ChildRecord): Promise<void> {
    record.group = undefined;
    let reason = 'terminated';
    if (record.instance) {
      if (record.state !== 'stopping') this.setState(record, 'stopping', reason);
      reason = (await this.shutdownRecord(record, reason, false)).reason;
    }
    record.terminating = undefined;
    if (this.records.get(record.spec.id) === record && record.state !== 'stopped') this.settleStopped(record, reason);
  }

  private shutdown(reason: string, exit: ChildExit): Promise<void> {
    this.stopping ??= this.stopAll(reason, exit);
    return this.stopping;
  }

  private async stopAll(reason: string, exit: ChildExit): Promise<void> {
    this.state = 'stopping';
    for (const group of this.groups) if (group.timer !== undefined) this.options.clock.clearTimeout(group.timer);
    this.groups.clear();
    const records = Array.from(this.records.values()).reverse();
    for (const record of records) record.group = undefined;
    const stopOne = async (record: ChildRecord) => {
      if (isDown(record.state)) return;
      let why = reason;
      if (record.instance) {
        if (record.state !== 'stopping') this.setState(record, 'stopping', reason);
        why = (await this.shutdownRecord(record, reason, this.killing)).reason;
      }
      if (this.records.get(record.spec.id) === record && record.state !== 'stopped') this.settleStopped(record, why);
    };
    if (this.options.shutdownOrder === 'ordered') for (const record of records) await stopOne(record);
    else await Promise.all(records.map(stopOne));
    this.state = 'stopped';
    this.exitSignal.exit(exit);
  }

  private async shutdownRecord(record: ChildRecord, reason: string, kill: boolean): Promise<ShutdownResult> {
    const instance = record.instance;
    if (!instance) return { how: 'never_started', reason };
    const result = await (kill ? instance.kill(reason) : instance.shutdown(reason));
    if (record.instance === instance) record.instance = undefined;
    return result;
  }

  private settleStopped(record: ChildRecord, reason: string): void {
    this.setState(record, 'stopped', reason);
    if (record.spec.restart === 'temporary') this.remove(record);
  }

  private setState(record: ChildRecord, to: ChildState, reason: string, attempt?: number, delayMs?: number): void {
    const from = record.state;
    if (from !== null) this.counts[from] -= 1;
    this.counts[to] += 1;
    record.state = to;
    this.decide(record, to, reason, attempt, delayMs);
    if (this.listeners.size === 0) return;
    const transition: { -readonly [K in keyof ChildTransition]: ChildTransition[K] } = {
      supervisor: this.id,
      id: record.spec.id,
      from,
      to,
      reason,
      at: this.options.clock.now(),
    };
    if (attempt !== undefined) transition.attempt = attempt;
    if (delayMs !== undefined) transition.delayMs = delayMs;
    this.listeners.emit(transition);
  }

  /** Tells the child's spec the decision a transition to a down state stands for. */
  private decide(record: ChildRecord, to: ChildState, reason: string, attempt: number | undefined, delayMs: number | undefined): void {
    const decision = record.spec.onDecision === undefined ? undefined : decisionFor(to, reason, attempt, delayMs);
    if (decision === undefined) return;
    // As for transition listeners (events.ts): a child that throws here is loud, and the supervisor stays consistent.
    try {
      record.spec.onDecision!(decision);
    } catch (error) {
      queueMicrotask(() => {
        throw error;
      });
    }
  }

  private add(spec: ResolvedChildSpec): ChildRecord {
    const record: ChildRecord = { spec, state: null, instance: undefined, restarts: 0, history: undefined, group: undefined, terminating: undefined };
    this.records.set(spec.id, record);
    return record;
  }

  private remove(record: ChildRecord): void {
    if (this.records.get(record.spec.id) !== record) return;
    this.records.delete(record.spec.id);
    if (record.state !== null) this.counts[record.state] -= 1;
  }

  private info(record: ChildRecord): ChildInfo {
    const { id, kind, restart } = record.spec;
    const handle = record.instance?.phase === 'up' ? record.instance.handle : undefined;
    return { id, kind, restart, state: record.state ?? 'starting', restarts: record.restarts, handle };
  }

  private find(id: string): ChildRecord {
    const record = this.records.get(id);
    if (!record) throw this.error('not_found', `supervisor "${this.id}" has no child "${id}"`, id);
    return record;
  }

  private supervising(): boolean {
    return this.state === 'starting' || this.state === 'running';
  }

  private assertRunning(): void {
    if (this.state !== 'running') throw this.error('not_running', `supervisor "${this.id}" is ${this.state}`);
  }

  private error(code: SupervisorError['code'], message: string, childId?: string, cause?: unknown): SupervisorError {
    return new SupervisorError(code, message, { supervisor: this.id, ...(childId === undefined ? {} : { childId }), cause });
  }
}
