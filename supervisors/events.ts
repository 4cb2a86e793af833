/**
 * Every change of a child's state is one `ChildTransition`, so the server can
 * write one log line per transition (`agent_id`, `from`, `to`, `reason`) and
 * publish it on the bus. Plain listener sets: the supervisors depend on
 * nothing, not even the bus they feed.
 */

/**
 * A child as its supervisor sees it. An agent's finer states (executing,
 * hibernated) happen inside `running`.
 */
export type ChildState = 'starting' | 'running' | 'restarting' | 'stopping' | 'stopped' | 'failed';

export const CHILD_STATES: readonly ChildState[] = ['starting', 'running', 'restarting', 'stopping', 'stopped', 'failed'];

export interface ChildTransition {
  /** The supervisor's id. */
  readonly supervisor: string;
  /** The child's id. */
  readonly id: string;
  /** `null` when the child was just added. */
  readonly from: ChildState | null;
  readonly to: ChildState;
  readonly reason: string;
  /** `restarting` of the child that died: the n-th restart within the intensity period. */
  readonly attempt?: number;
  /** `restarting`: the backoff before the start (for a group, counted once its siblings are down). */
  readonly delayMs?: number;
  /** `clock.now()` at the transition. */
  readonly at: number;
}

export type TransitionListener = (transition: ChildTransition) => void;

export interface ListenerSet<T> {
  readonly size: number;
  /** Returns an unsubscribe function. */
  add(listener: (value: T) => void): () => void;
  emit(value: T): void;
}

/**
 * A listener that throws is a bug in the listener, not in the child: the
 * error is rethrown on a microtask, where it is loud (an uncaught exception)
 * without leaving the supervisor's state half-updated.
 */
export function createListenerSet<T>(): ListenerSet<T> {
  const listeners = new Set<(value: T) => void>();
  return {
    get size() {
      return listeners.size;
    },
    add(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    emit(value) {
      for (const listener of listeners) {
        try {
          listener(value);
        } catch (error) {
          queueMicrotask(() => {
            throw error;
          });
        }
      }
    },
  };
}
