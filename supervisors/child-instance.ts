/**
 * One start of one child: calling `start` (under `startTimeoutMs`), listening
 * for its exit, and stopping it (graceful `stop`, then `kill` once
 * `shutdownTimeoutMs` has passed). The supervisor makes a new instance for
 * every start, so nothing from a dead start (a late handle, a late exit) can
 * touch its successor.
 *
 * A class rather than closures: a supervisor holds one per agent, and
 * prototype methods keep that small.
 */
import type { Clock, TimerHandle } from './clock.js';
import type { ChildHandle, ResolvedChildSpec, StartContext } from './child-spec.js';
import { abnormalExit, ExitError, type ChildExit } from './exit-signal.js';

/** How a shutdown ended; `reason` is what the supervisor reports for `stopped`. */
export interface ShutdownResult {
  readonly how: 'stopped' | 'killed' | 'exited' | 'never_started';
  readonly reason: string;
}

/** Called for an exit nobody asked for: a crash, or a child ending on its own. */
export type CrashListener = (instance: ChildInstance, exit: ChildExit) => void;

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error));

const startFailure = (error: unknown): ChildExit => (error instanceof ExitError ? error.exit : abnormalExit(`start_failed: ${describe(error)}`, error));

export class ChildInstance {
  handle: ChildHandle | undefined;
  /** `down`: exited, stopped, killed or never started; nothing more is expected from it. */
  phase: 'starting' | 'up' | 'down' = 'starting';
  private readonly spec: ResolvedChildSpec;
  private readonly clock: Clock;
  private readonly onCrash: CrashListener;
  private startSettled = false;
  private resolveStart: ((failure: ChildExit | undefined) => void) | undefined;
  private startTimer: TimerHandle | undefined;
  private unsubscribe: (() => void) | undefined;
  private shutdownPromise: Promise<ShutdownResult> | undefined;
  // Set while a shutdown is pending; cleared by `finish`.
  private resolveShutdown: ((result: ShutdownResult) => void) | undefined;
  private shutdownTimer: TimerHandle | undefined;
  /** Aborted when the supervisor stops waiting for the start (`StartContext.signal`). */
  private readonly starting = new AbortController();
  private stopReason = '';
  private killing = false;

  constructor(spec: ResolvedChildSpec, clock: Clock, onCrash: CrashListener) {
    this.spec = spec;
    this.clock = clock;
    this.onCrash = onCrash;
  }

  /**
   * Starts the child. Resolves `undefined` once it has a handle, or the
   * abnormal exit standing for a failed start (`start_failed: ...`,
   * `start_timeout`, `start_abandoned`, or the exit of an `ExitError`).
   * Never rejects.
   */
  start(context: Omit<StartContext, 'signal'>): Promise<ChildExit | undefined> {
    const started = new Promise<ChildExit | undefined>((resolve) => {
      this.resolveStart = resolve;
    });
    if (Number.isFinite(this.spec.startTimeoutMs)) {
      this.startTimer = this.clock.setTimeout(() => {
        this.startTimer = undefined;
        this.settleStart(abnormalExit('start_timeout'));
      }, this.spec.startTimeoutMs);
    }
    let result: Promise<ChildHandle> | ChildHandle;
    try {
      result = this.spec.start({ ...context, signal: this.starting.signal });
    } catch (error) {
      this.settleStart(startFailure(error));
      return started;
    }
    if (result instanceof Promise) {
      result.then(
        (handle) => this.attach(handle),
        (error: unknown) => this.settleStart(startFailure(error)),
      );
    } else {
      this.attach(result);
    }
    return started;
  }

  /**
   * Stops the child: `stop`, then `kill` after `shutdownTimeoutMs`. A start
   * still in progress is waited for within the same deadline, then
   * abandoned. Idempotent: every caller gets the same result.
   */
  shutdown(reason: string): Promise<ShutdownResult> {
    return this.beginShutdown(reason, false);
  }

  /** Kills at once without asking, also cutting short a shutdown in progress. */
  kill(reason: string): Promise<ShutdownResult> {
    if (!this.shutdownPromise) return this.beginShutdown(reason, true);
    this.killNow(reason);
    return this.shutdownPromise;
  }

  private beginShutdown(reason: string, immediate: boolean): Promise<ShutdownResult> {
    if (this.shutdownPromise) return this.shutdownPromise;
    this.stopReason = reason;
    this.shutdownPromise = new Promise((resolve) => {
      this.resolveShutdown = resolve;
    });
    const timeoutMs = this.spec.shutdownTimeoutMs;
    if (this.phase === 'down') {
      this.finish(this.handle ? 'exited' : 'never_started', reason);
    } else if (immediate || timeoutMs === 0) {
      this.killNow(reason);
    } else {
      if (Number.isFinite(timeoutMs)) this.shutdownTimer = this.clock.setTimeout(() => this.killNow('shutdown_timeout'), timeoutMs);
      // While starting, `attach` or `settleStart` carries the shutdown on; the child may give up its start.
      if (this.phase === 'up') this.requestStop(this.handle!);
      else this.starting.abort(reason);
    }
    return this.shutdownPromise;
  }

  private attach(handle: ChildHandle): void {
    if (this.phase === 'down') {
      // The start failed by timeout, or a shutdown gave up waiting for it.
      void this.killQuietly(handle, 'start_abandoned');
      return;
    }
    this.handle = handle;
    this.phase = 'up';
    this.settleStart(undefined);
    this.unsubscribe = handle.onExit((exit) => this.exitReported(exit));
    // The exit may have been replayed during `onExit`, before `unsubscribe` was set.
    if (this.isDown()) this.unsubscribe();
    else if (this.resolveShutdown) this.requestStop(handle);
  }

  // A method, so TypeScript does not keep `phase` narrowed across calls that change it.
  private isDown(): boolean {
    return this.phase === 'down';
  }

  private settleStart(failure: ChildExit | undefined): void {
    if (this.startSettled) return;
    this.startSettled = true;
    if (this.startTimer !== undefined) this.clock.clearTimeout(this.startTimer);
    if (failure) {
      this.starting.abort(failure.reason);
      this.phase = 'down';
      this.finish('never_started', failure.reason);
    }
    const resolve = this.resolveStart;
    this.resolveStart = undefined;
    resolve?.(failure);
  }

  private exitReported(exit: ChildExit): void {
    if (this.phase === 'down') return;
    this.phase = 'down';
    this.unsubscribe?.();
    if (!this.resolveShutdown) this.onCrash(this, exit);
    else if (!this.killing) this.finish('stopped', this.stopReason);
  }

  private requestStop(handle: ChildHandle): void {
    let result: Promise<void> | void;
    try {
      result = handle.stop(this.stopReason);
    } catch {
      this.killNow('stop_failed');
      return;
    }
    Promise.resolve(result).then(
      () => {
        if (!this.killing) this.finish('stopped', this.stopReason);
      },
      () => this.killNow('stop_failed'),
    );
  }

  private killNow(reason: string): void {
    if (!this.resolveShutdown || this.killing) return;
    this.killing = true;
    if (this.phase === 'starting') {
      this.finish('killed', reason);
      this.starting.abort(`killed: ${reason}`);
      this.settleStart(abnormalExit('start_abandoned'));
      return;
    }
    this.phase = 'down';
    this.unsubscribe?.();
    void this.killQuietly(this.handle!, reason).then(() => this.finish('killed', reason));
  }

  private killQuietly(handle: ChildHandle, reason: string): Promise<void> {
    // A kill that fails has nothing left to fall back on; the child is considered gone.
    try {
      return Promise.resolve(handle.kill(reason)).catch(() => undefined);
    } catch {
      return Promise.resolve();
    }
  }

  private finish(how: ShutdownResult['how'], reason: string): void {
    const resolve = this.resolveShutdown;
    if (!resolve) return;
    this.resolveShutdown = undefined;
    if (this.shutdownTimer !== undefined) this.clock.clearTimeout(this.shutdownTimer);
    this.shutdownTimer = undefined;
    this.phase = 'down';
    resolve({ how, reason: how === 'killed' ? `killed: ${reason}` : reason });
  }
}
