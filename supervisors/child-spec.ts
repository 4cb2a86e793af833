/**
 * Child specifications and the contract a supervised thing implements.
 *
 * Agents implement `ChildHandle` (stop = drain the in-flight execution, kill
 * = cut it), and so do the server's services (store, executor pool, bus, API
 * listeners) and supervisors themselves, which is what makes a tree.
 */
import { MAX_TIMER_MS } from './clock.js';
import type { ChildDecision } from './child-decision.js';
import type { ChildExit, ExitListener } from './exit-signal.js';

/**
 * OTP restart types: `permanent` is always restarted, `transient` only after
 * an abnormal exit, `temporary` never (and is forgotten once it ends).
 */
export type RestartType = 'permanent' | 'transient' | 'temporary';

export const RESTART_TYPES: readonly RestartType[] = ['permanent', 'transient', 'temporary'];

/** `supervisor` children get an unbounded shutdown by default, as in OTP. */
export type ChildKind = 'worker' | 'supervisor';

export interface ChildHandle {
  /**
   * Subscribes the supervisor to the child's one exit (crash or normal end).
   * If the child already exited, the listener is called at once. The
   * supervisor subscribes once per handle and reacts before the listener
   * returns (it may stop siblings), so report the exit last, once the
   * child's own state is consistent. `createExitSignal` implements it.
   */
  onExit(listener: ExitListener): () => void;
  /**
   * Graceful stop: finish in-flight work, release resources, then settle.
   * Reporting an exit through `onExit` also counts as stopped. Not settled
   * within `shutdownTimeoutMs`, or rejected, it is followed by `kill`.
   */
  stop(reason: string): Promise<void> | void;
  /**
   * Forced stop: cut in-flight work and release resources without waiting
   * for the child's cooperation; it must settle promptly, as the supervisor
   * waits for it.
   */
  kill(reason: string): Promise<void> | void;
}

/** Why a child is started: the reason of its `starting` transition. */
export type StartReason = 'start' | 'restart' | 'restart_requested';

export interface StartContext {
  readonly id: string;
  /** Restarts of this child so far (0 on its first start). */
  readonly restarts: number;
  readonly reason: StartReason;
  /**
   * Aborted when the supervisor stops waiting for this start: at
   * `startTimeoutMs`, or when a stop or kill is asked for meanwhile (the
   * signal's `reason` is then the stop's). A child whose start takes a while
   * gives up on it and settles; one that ignores the signal is killed when
   * its handle arrives.
   */
  readonly signal: AbortSignal;
}

export interface ChildSpec {
  /** Unique among the supervisor's children. */
  readonly id: string;
  /** Starts a fresh child. Throwing, rejecting or overrunning `startTimeoutMs` is a failed start. */
  readonly start: (context: StartContext) => Promise<ChildHandle> | ChildHandle;
  /** Default `permanent`, as in OTP. */
  readonly restart?: RestartType;
  /** Default `worker`. */
  readonly kind?: ChildKind;
  /**
   * How long `stop` may take before `kill`: 0 kills at once (OTP's
   * `brutal_kill`), `Infinity` waits for ever (the default for supervisors,
   * whose own children have their own timeouts).
   */
  readonly shutdownTimeoutMs?: number;
  /** How long `start` may take; default `Infinity` (agents enforce their own startup timeout). */
  readonly startTimeoutMs?: number;
  /**
   * Told each decision the supervisor takes about this child once it is
   * down: a restart after a backoff, giving up, or leaving it stopped. For a
   * child that stays one entity across its starts (an agent, whose state
   * clients see), so it learns the decisions rather than mirroring them.
   */
  readonly onDecision?: (decision: ChildDecision) => void;
}

export type ResolvedChildSpec = Required<Omit<ChildSpec, 'onDecision'>> & Pick<ChildSpec, 'onDecision'>;

/**
 * OTP's worker default; it matches `agent_shutdown_timeout`, so an agent left
 * on defaults drains for as long as the server's own shutdown allows.
 */
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 5_000;

/** Whether a child with this restart type is restarted after `exit`. */
export function shouldRestart(restart: RestartType, exit: ChildExit): boolean {
  if (restart === 'permanent') return true;
  if (restart === 'transient') return exit.kind === 'abnormal';
  return false;
}

function checkTimeout(id: string, name: string, value: number): number {
  if (typeof value !== 'number' || Number.isNaN(value) || value < 0) {
    throw new RangeError(`child spec "${id}": ${name} must be a number of milliseconds >= 0, got ${String(value)}`);
  }
  if (Number.isFinite(value) && value > MAX_TIMER_MS) {
    throw new RangeError(`child spec "${id}": ${name} ${value} is beyond what a timer can wait (${MAX_TIMER_MS}); use Infinity`);
  }
  return value;
}

/** Fills in defaults and rejects what can only be a programming error. */
export function resolveChildSpec(spec: ChildSpec): ResolvedChildSpec {
  if (typeof spec.id !== 'string' || spec.id === '') throw new TypeError('child spec: id must be a non-empty string');
  if (typeof spec.start !== 'function') throw new TypeError(`child spec "${spec.id}": start must be a function`);
  const restart = spec.restart ?? 'permanent';
  if (!RESTART_TYPES.includes(restart)) {
    throw new RangeError(`child spec "${spec.id}": restart must be one of ${RESTART_TYPES.join(', ')}, got ${String(restart)}`);
  }
  const kind = spec.kind ?? 'worker';
  if (kind !== 'worker' && kind !== 'supervisor') throw new RangeError(`child spec "${spec.id}": kind must be worker or supervisor`);
  const defaultShutdown = kind === 'supervisor' ? Infinity : DEFAULT_SHUTDOWN_TIMEOUT_MS;
  if (spec.onDecision !== undefined && typeof spec.onDecision !== 'function') throw new TypeError(`child spec "${spec.id}": onDecision must be a function`);
  return {
    id: spec.id,
    start: spec.start,
    restart,
    kind,
    shutdownTimeoutMs: checkTimeout(spec.id, 'shutdownTimeoutMs', spec.shutdownTimeoutMs ?? defaultShutdown),
    startTimeoutMs: checkTimeout(spec.id, 'startTimeoutMs', spec.startTimeoutMs ?? Infinity),
    ...(spec.onDecision === undefined ? {} : { onDecision: spec.onDecision }),
  };
}
