/**
 * How a child tells its supervisor it is gone. OTP distinguishes a normal
 * exit from every other reason; restart types decide on that distinction
 * alone (child-spec.ts `shouldRestart`), and the reason is kept for logs.
 */

export interface ChildExit {
  readonly kind: 'normal' | 'abnormal';
  /** Short and machine-friendly, e.g. `normal`, `trap: unreachable`, `start_timeout`. */
  readonly reason: string;
  readonly error?: unknown;
}

export type ExitListener = (exit: ChildExit) => void;

export function normalExit(reason = 'normal'): ChildExit {
  return { kind: 'normal', reason };
}

export function abnormalExit(reason: string, error?: unknown): ChildExit {
  return error === undefined ? { kind: 'abnormal', reason } : { kind: 'abnormal', reason, error };
}

/**
 * A start that fails for a reason of its own (an agent's `start_timeout`)
 * rejects with this, and the failed start carries `exit` as it is rather than
 * `start_failed: <message>`.
 */
export class ExitError extends Error {
  override readonly name = 'ExitError';
  readonly exit: ChildExit;

  constructor(exit: ChildExit) {
    super(exit.reason, exit.error === undefined ? undefined : { cause: exit.error });
    this.exit = exit;
  }
}

/** The exit half of a `ChildHandle`, ready to embed in an implementation. */
export interface ExitSignal {
  /** The exit, once it happened. */
  readonly exited: ChildExit | undefined;
  /**
   * Calls `listener` once with the exit; at once (synchronously) if the exit
   * already happened, so a child that dies while its supervisor subscribes is
   * never missed. Returns an unsubscribe function.
   */
  onExit(listener: ExitListener): () => void;
  /** Records the exit and tells the listeners; only the first call counts. Returns whether it did. */
  exit(exit: ChildExit): boolean;
}

export function createExitSignal(): ExitSignal {
  let exited: ChildExit | undefined;
  // Almost always one listener (the supervisor); a Set is only made for more.
  let listeners: Set<ExitListener> | undefined;

  return {
    get exited() {
      return exited;
    },
    onExit(listener) {
      if (exited) {
        listener(exited);
        return () => {};
      }
      listeners ??= new Set();
      listeners.add(listener);
      return () => {
        listeners?.delete(listener);
      };
    },
    exit(exit) {
      if (exited) return false;
      exited = exit;
      const current = listeners;
      listeners = undefined;
      if (current) for (const listener of current) listener(exit);
      return true;
    },
  };
}
