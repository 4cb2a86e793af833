/**
 * What a supervisor offers its users (the server, an operator's tools, a
 * parent supervisor). Errors are `SupervisorError`s with the codes named.
 */
import type { ChildHandle, ChildKind, ChildSpec, RestartType } from './child-spec.js';
import type { ChildState, TransitionListener } from './events.js';
import type { ExitListener } from './exit-signal.js';

export type SupervisorState = 'idle' | 'starting' | 'running' | 'stopping' | 'stopped';

export interface ChildInfo {
  readonly id: string;
  readonly kind: ChildKind;
  readonly restart: RestartType;
  readonly state: ChildState;
  /** Restarts after crashes since the child was added. */
  readonly restarts: number;
  /** The live child's handle (a `Supervisor` for `kind: 'supervisor'`), as OTP gives a pid. */
  readonly handle: ChildHandle | undefined;
}

export type ChildCounts = { readonly specs: number } & Readonly<Record<ChildState, number>>;

export interface Supervisor extends ChildHandle {
  readonly id: string;
  readonly state: SupervisorState;
  /** Starts the static children in order; if one fails, stops those started (reverse order) and rejects (`start_failed`). */
  start(): Promise<Supervisor>;
  /** Adds and starts a child; rejects `already_exists`, `not_running`, or `start_failed` (and the child is not kept). */
  startChild(spec: ChildSpec): Promise<ChildInfo>;
  /** Stops a child (graceful, then kill) and keeps its spec, except a temporary child's; `not_found`. */
  terminateChild(id: string): Promise<void>;
  /** Starts a stopped or failed child again with a fresh intensity count; `running`, `not_found`, `start_failed`. */
  restartChild(id: string): Promise<ChildInfo>;
  /** Forgets a stopped or failed child; `running`, `not_found`. */
  deleteChild(id: string): void;
  getChild(id: string): ChildInfo | undefined;
  whichChildren(): ChildInfo[];
  /** O(1). */
  countChildren(): ChildCounts;
  /** Every child transition; returns an unsubscribe function. */
  on(listener: TransitionListener): () => void;
  /** Normal exit `shutdown` once every child is stopped. */
  stop(reason?: string): Promise<void>;
  /** Kills every child at once (also during a stop); abnormal exit `killed`. */
  kill(reason?: string): Promise<void>;
  onExit(listener: ExitListener): () => void;
}
