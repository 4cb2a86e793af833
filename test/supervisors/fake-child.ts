/**
 * A controllable child for supervisor tests: the test decides how each start
 * and stop behaves and makes children crash or end on demand; a shared log
 * records the order of starts, stops and kills.
 */
import type { ChildHandle, ChildSpec, ChildTransition, RestartType, Supervisor } from '../../supervisors/index.js';
import { abnormalExit, createExitSignal, normalExit } from '../../supervisors/index.js';

export interface Behaviour {
  /** `async`: the handle comes on a later microtask; `hang`: never; `throw`: start throws. */
  start: 'sync' | 'async' | 'hang' | 'throw';
  /** `exit`: reports a normal exit; `resolve`: just resolves; `hang`: never settles; `reject`: rejects. */
  stop: 'exit' | 'resolve' | 'hang' | 'reject';
}

export class FakeChild implements ChildHandle {
  readonly stopCalls: string[] = [];
  readonly killCalls: string[] = [];
  private readonly signal = createExitSignal();

  constructor(
    readonly id: string,
    readonly startNumber: number,
    private readonly behaviour: Behaviour,
    private readonly log: string[],
  ) {}

  get alive(): boolean {
    return this.signal.exited === undefined && this.killCalls.length === 0;
  }

  onExit(listener: Parameters<ChildHandle['onExit']>[0]): () => void {
    return this.signal.onExit(listener);
  }

  crash(reason = 'boom'): void {
    this.signal.exit(abnormalExit(reason));
  }

  end(reason = 'normal'): void {
    this.signal.exit(normalExit(reason));
  }

  stop(reason: string): Promise<void> | void {
    this.stopCalls.push(reason);
    this.log.push(`stop ${this.id}`);
    switch (this.behaviour.stop) {
      case 'exit':
        this.signal.exit(normalExit('shutdown'));
        return;
      case 'resolve':
        return Promise.resolve();
      case 'hang':
        return new Promise(() => {});
      case 'reject':
        return Promise.reject(new Error('cannot stop'));
    }
  }

  kill(reason: string): void {
    this.killCalls.push(reason);
    this.log.push(`kill ${this.id}`);
  }
}

export interface SpecOptions extends Partial<Behaviour> {
  restart?: RestartType;
  shutdownTimeoutMs?: number;
  startTimeoutMs?: number;
}

export function createFakeWorld() {
  const log: string[] = [];
  const instances = new Map<string, FakeChild[]>();
  const behaviours = new Map<string, Behaviour>();

  function spec(id: string, options: SpecOptions = {}): ChildSpec {
    const { restart, shutdownTimeoutMs, startTimeoutMs, ...behaviour } = options;
    behaviours.set(id, { start: 'sync', stop: 'exit', ...behaviour });
    return {
      id,
      ...(restart && { restart }),
      ...(shutdownTimeoutMs !== undefined && { shutdownTimeoutMs }),
      ...(startTimeoutMs !== undefined && { startTimeoutMs }),
      start: () => {
        const current = behaviours.get(id)!;
        const list = instances.get(id) ?? [];
        instances.set(id, list);
        log.push(`start ${id}`);
        if (current.start === 'throw') throw new Error(`${id} will not start`);
        const child = new FakeChild(id, list.length + 1, current, log);
        list.push(child);
        if (current.start === 'hang') return new Promise<ChildHandle>(() => {});
        if (current.start === 'async') return Promise.resolve(child);
        return child;
      },
    };
  }

  return {
    log,
    spec,
    /** Changes how later starts and stops of `id` behave. */
    set(id: string, behaviour: Partial<Behaviour>): void {
      behaviours.set(id, { ...behaviours.get(id)!, ...behaviour });
    },
    /** The latest instance of `id`. */
    current(id: string): FakeChild {
      const list = instances.get(id);
      if (!list?.length) throw new Error(`no instance of ${id}`);
      return list[list.length - 1]!;
    },
    /** How many instances of `id` were made. */
    starts(id: string): number {
      return instances.get(id)?.length ?? 0;
    },
    clearLog(): void {
      log.length = 0;
    },
  };
}

/** Collects a supervisor's transitions. */
export function recordTransitions(supervisor: Supervisor): ChildTransition[] {
  const transitions: ChildTransition[] = [];
  supervisor.on((transition) => transitions.push(transition));
  return transitions;
}

/** `id from>to`, for comparing sequences of transitions. */
export function brief(transitions: readonly ChildTransition[]): string[] {
  return transitions.map((t) => `${t.id} ${t.from ?? '-'}>${t.to}`);
}
