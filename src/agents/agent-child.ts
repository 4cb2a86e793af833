/**
 * One start of an agent as the agent supervisor sees it: the `ChildHandle`
 * its `start` resolves with. The supervisor never reuses a handle after an
 * exit and calls `start` again for every restart, so each start gets its own;
 * the agent behind them (agent-runtime.ts) and its machine stay the same.
 */
import { ExitError, createExitSignal, type ChildDecision, type ChildExit, type ChildHandle, type ChildSpec, type ExitListener, type StartContext } from '../../supervisors/index.js';

/** What a handle asks of its agent: stop gracefully, or cut now; both settle once the agent is stopped. */
export interface Stoppable {
  stop(reason: string): Promise<void>;
  kill(reason: string): Promise<void>;
}

export class AgentChild implements ChildHandle {
  /** The supervisor's `start` waits for this. */
  readonly started: Promise<ChildHandle>;
  private readonly exitSignal = createExitSignal();
  private settleStart: ((outcome: ChildExit | undefined) => void) | undefined;

  constructor(private readonly agent: Stoppable) {
    this.started = new Promise<ChildHandle>((resolve, reject) => {
      this.settleStart = (failure) => (failure === undefined ? resolve(this) : reject(new ExitError(failure)));
    });
  }

  /** True until the start succeeded or failed. */
  get starting(): boolean {
    return this.settleStart !== undefined;
  }

  /** The start succeeded, or failed with `failure`; only the first call counts. */
  settle(failure?: ChildExit): void {
    const settle = this.settleStart;
    this.settleStart = undefined;
    settle?.(failure);
  }

  /** A crash after the start: reported to the supervisor, which decides at once. */
  exited(exit: ChildExit): void {
    this.exitSignal.exit(exit);
  }

  onExit(listener: ExitListener): () => void {
    return this.exitSignal.onExit(listener);
  }

  stop(reason: string): Promise<void> {
    return this.agent.stop(reason);
  }

  kill(reason: string): Promise<void> {
    return this.agent.kill(reason);
  }
}

/** What the agent supervisor's child spec asks of an agent (agent-runtime.ts). */
export interface Supervised {
  readonly id: string;
  start(context: StartContext): Promise<ChildHandle>;
  decide(decision: ChildDecision): void;
}

/** The agent is the child of every start; its machine bounds its own start and stop, so the supervisor waits for them. */
export function agentChildSpec(agent: Supervised): ChildSpec {
  return {
    id: agent.id,
    // Every exit of an agent is abnormal (restarted) but a quarantine, its one normal exit.
    restart: 'transient',
    shutdownTimeoutMs: Infinity,
    start: (startContext) => agent.start(startContext),
    onDecision: (decision) => agent.decide(decision),
  };
}
