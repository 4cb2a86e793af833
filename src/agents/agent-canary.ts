/**
 * An updated agent's probation (its rollback window): for this many messages
 * or this long after an update, a crash brings the previous module back with
 * the state it had at the update (agent-update.ts `rollBack`). The window
 * ends when it has passed: the previous state is dropped then, and the
 * previous module stays only as the record's `previous_module`.
 *
 * A server restart during the window ends it: the agent is restored with its
 * new module (the stored one) and a fresh instance, as every restored agent.
 */
import type { Clock, TimerHandle } from '../../supervisors/index.js';
import type { RollbackWindow } from '../config/rollback-window.js';
import type { AdmittedModule, InstanceSnapshot } from '../sandbox/types.js';
import type { AgentRecord } from '../store/types.js';

/** What a rollback restores: the module, its state at the update, and the record's fields of that version. */
export interface PreviousVersion {
  readonly admitted: AdmittedModule;
  readonly snapshot: InstanceSnapshot | undefined;
  readonly record: Pick<AgentRecord, 'moduleSha256' | 'moduleSize' | 'moduleVersion' | 'previousModule' | 'capabilities' | 'resources'>;
}

export interface Canary {
  readonly previous: PreviousVersion;
  /** Messages still on probation, for a window counted in messages. */
  messagesLeft: number | undefined;
  /** The end of a window counted in time. */
  timer: TimerHandle | undefined;
}

/** Where an agent keeps its canary (agent-runtime.ts). */
export interface CanaryHolder {
  canary: Canary | undefined;
}

export function startCanary(holder: CanaryHolder, previous: PreviousVersion, window: RollbackWindow, clock: Clock): void {
  endCanary(holder, clock);
  if (window.kind === 'off') return;
  const canary: Canary = { previous, messagesLeft: window.kind === 'messages' ? window.messages : undefined, timer: undefined };
  if (window.kind === 'duration') {
    canary.timer = clock.setTimeout(() => {
      if (holder.canary === canary) holder.canary = undefined;
    }, window.ms);
  }
  holder.canary = canary;
}

export function endCanary(holder: CanaryHolder, clock: Clock): void {
  const timer = holder.canary?.timer;
  if (timer !== undefined) clock.clearTimeout(timer);
  holder.canary = undefined;
}

/** A message handled without a crash: one less on probation. */
export function canaryHandled(holder: CanaryHolder, clock: Clock): void {
  const canary = holder.canary;
  if (canary?.messagesLeft === undefined) return;
  canary.messagesLeft -= 1;
  if (canary.messagesLeft <= 0) endCanary(holder, clock);
}
