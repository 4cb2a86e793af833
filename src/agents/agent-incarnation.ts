/**
 * One start of an agent: the `ChildHandle` the agent supervisor holds. The
 * supervisor calls its child spec's `start` for the first start and for every
 * restart, and each call makes a new incarnation with a fresh instance, so
 * nothing of a crashed one (its state, a late result, a release still queued
 * behind a long execution) can reach its successor. That is also why state is
 * lost on a crash, as in OTP, and kept across hibernation, which happens
 * inside one incarnation.
 *
 * Phases (finer than the machine's states, which the host derives from the
 * supervisor's transitions):
 *
 *   starting ─> up ─> hibernating ─> hibernated ─> waking ─> up
 *                │                                   (state restored from the snapshot)
 *                └─> stopping ─> down    (stop: the execution in flight finishes first)
 *   any ───────────────────────────> down    (crash, kill)
 *
 * A crash (failed execution, lost worker, failed hibernation or wake) is
 * reported through `onExit`, last, once the incarnation is consistent: the
 * supervisor reacts before `exit` returns. `kill` cuts without waiting: an
 * execution still running in its worker is abandoned (its output discarded,
 * its sender told) and the instance is released behind it; the hard stop of
 * that execution is the pool's watchdog at `execution_timeout`.
 */
import { abnormalExit, createExitSignal, type ChildHandle, type ExitListener } from '../../supervisors/index.js';
import { isSvcError, SvcError } from '../errors/svc-error.js';
import type { InstanceSnapshot, Placement } from '../sandbox/types.js';
import type { AgentRuntime } from './agent-runtime.js';

export type IncarnationPhase = 'starting' | 'up' | 'hibernating' | 'hibernated' | 'waking' | 'stopping' | 'down';

/** Keeps exit reasons short for log lines; the full message stays in the error. */
const MAX_REASON_LENGTH = 200;

export function describeError(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.length > MAX_REASON_LENGTH ? `${text.slice(0, MAX_REASON_LENGTH)}…` : text;
}

export class Incarnation implements ChildHandle {
  phase: IncarnationPhase = 'starting';
  /** The pool's name of the instance while there is one. */
  key: string | undefined;
  /** The execution in flight (set by the dispatcher); a graceful stop waits for it. */
  executing: Promise<unknown> | undefined;
  /** Cut by `kill`: a result still to come is discarded. */
  killed = false;
  private readonly agent: AgentRuntime;
  private readonly exitSignal = createExitSignal();
  private snapshot: InstanceSnapshot | undefined;
  /** Hibernation or wake in progress; a stop waits for it. */
  private transition: Promise<void> | undefined;

  constructor(agent: AgentRuntime) {
    this.agent = agent;
  }

  /**
   * Instantiates and runs `_initialize`/`_start` in the pool. Rejects with the
   * pool's `SvcError` (`metadata.reason` trap, fuel_exhausted, timeout, ...);
   * the startup timeout on the injected clock is the supervisor's
   * `startTimeoutMs`, and the pool's watchdog stops a start function that spins.
   */
  async start(): Promise<Incarnation> {
    const { agent } = this;
    const { agentLog } = agent.env;
    const key = agent.nextInstanceKey();
    const placement = await instantiate(agent, key, undefined).catch((error: unknown) => {
      throw withAgentId(error, agent.id);
    });
    for (const line of placement.log) agentLog.write(agent.id, line);
    this.key = key;
    this.phase = 'up';
    // A start that arrives after its timeout is killed by the supervisor; it must not touch its successor's figures.
    if (agent.incarnation === this) agent.setMemory(placement.memoryBytes);
    return this;
  }

  onExit(listener: ExitListener): () => void {
    return this.exitSignal.onExit(listener);
  }

  /** Snapshot memory and globals, release the instance; the next message wakes it. Called when idle. */
  hibernate(): void {
    const key = this.key;
    if (this.phase !== 'up' || key === undefined) return;
    this.phase = 'hibernating';
    const { pool } = this.agent.env;
    this.transition = (async () => {
      let snapshot: InstanceSnapshot;
      try {
        snapshot = await pool.snapshot(key);
      } catch (error) {
        if (this.phase === 'hibernating') this.crash(`hibernate_failed: ${describeError(error)}`, error);
        return;
      }
      await pool.release(key);
      if (this.key === key) this.key = undefined;
      // Stopped or crashed meanwhile: the instance is gone either way.
      if (this.phase !== 'hibernating') return;
      this.snapshot = snapshot;
      this.phase = 'hibernated';
      this.agent.setMemory(snapshot.memory.byteLength);
      this.agent.send({ type: 'HIBERNATED', reason: 'idle' });
      // Messages that arrived while the snapshot was taken wake it at once.
      this.agent.env.hooks.ready(this.agent);
    })().finally(() => {
      this.transition = undefined;
    });
  }

  /** Restores the snapshot into a fresh instance; the dispatcher calls it for the first waiting message. */
  wake(): void {
    const snapshot = this.snapshot;
    if (this.phase !== 'hibernated' || snapshot === undefined) return;
    this.phase = 'waking';
    const { agent } = this;
    const { pool, hooks } = agent.env;
    const key = agent.nextInstanceKey();
    this.transition = instantiate(agent, key, snapshot)
      .then(
        (placement) => {
          if (this.phase !== 'waking') {
            void pool.release(key);
            return;
          }
          this.key = key;
          this.snapshot = undefined;
          this.phase = 'up';
          agent.setMemory(placement.memoryBytes);
          agent.send({ type: 'WOKE', reason: 'message' });
          hooks.ready(agent);
        },
        (error: unknown) => {
          if (this.phase === 'waking') this.crash(`wake_failed: ${describeError(error)}`, error);
        },
      )
      .finally(() => {
        this.transition = undefined;
      });
  }

  /** The worker holding `key` was lost (the pool's `workerLost`). */
  lost(key: string): void {
    if (key === this.key) this.crash('worker_lost');
  }

  /** A crash: the instance is gone or unusable; the supervisor decides what comes next. */
  crash(reason: string, error?: unknown): void {
    if (this.phase === 'down') return;
    this.dropInstance();
    this.exitSignal.exit(abnormalExit(reason, error));
  }

  /** Graceful: no new execution starts; the one in flight (and a hibernation or wake) finishes; then release. */
  async stop(): Promise<void> {
    if (this.phase === 'down') return;
    this.phase = 'stopping';
    await this.transition;
    await this.executing;
    const key = this.key;
    this.dropInstance(false);
    if (key !== undefined) await this.agent.env.pool.release(key);
  }

  /** Forced: cut now; see the module comment for what happens to an execution still running. */
  kill(): void {
    if (this.phase === 'down') return;
    this.killed = true;
    this.dropInstance();
  }

  private dropInstance(release = true): void {
    const key = this.key;
    this.key = undefined;
    this.snapshot = undefined;
    this.phase = 'down';
    // A no-op when the pool already discarded the instance (after a failed execution or a lost worker).
    if (release && key !== undefined) void this.agent.env.pool.release(key);
  }
}

function instantiate(agent: AgentRuntime, key: string, snapshot: InstanceSnapshot | undefined): Promise<Placement> {
  const options = snapshot === undefined ? { memoryLimitBytes: agent.memoryLimitBytes } : { memoryLimitBytes: agent.memoryLimitBytes, snapshot };
  return agent.env.pool.instantiate(key, agent.admitted!, options);
}

/** The pool names instances by key (`<agent id>#<n>`); callers know the agent by its id. */
function withAgentId(error: unknown, agentId: string): unknown {
  if (!isSvcError(error) || error.metadata['agent_id'] === undefined) return error;
  return new SvcError(error.code, error.message, { ...error.metadata, agent_id: agentId });
}
