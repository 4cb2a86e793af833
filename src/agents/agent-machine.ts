/**
 * The lifecycle of one agent, as an XState v5 machine: the one owner of it
 * (DESIGN.md section 6). Its states invoke the work and react to its outcome
 * (start, hibernate, wake and stop are promise actors over the executor pool,
 * `LifecyclePort`), and every delay is on the clock the actor is given.
 *
 *   created ─start─> starting ─done─> running ─idle─> (hibernating) ─> hibernated ─wake─> (waking) ─> running
 *                       │                 │ crash                          │
 *                       │ failed,         v                                │
 *                       │ timed out ─> exited ─restart─> restarting ─start─> starting
 *                       │                 ├─give_up─> failed ─start─> starting
 *                       │                 └─stop───> stopped (failed, for a restored agent that never started,
 *                       │                                     and for a quarantined one)
 *   any live state ─stop─> stopping ─drained─> stopped       ─kill─> stopped (cut now)
 *   running, hibernated ─quarantine─> exited (a normal exit: the supervisor does not restart it)
 *   stopped ─start─> starting (an operator's restart: the supervisor's restartChild after terminateChild)
 *   running, hibernated ─upgrade─> (upgrading) ─done─> running on the new module's instance; ─error─> back as before
 *
 * Who decides: the agent supervisor (supervisors/) owns restarts, intensity
 * and backoff. Its decisions arrive as events, as it takes them
 * (`ChildDecision`: `restart`, `give_up`, `stop`), and so do its starts
 * (`start`, with the reason of the `StartContext`) and the `stop` and `kill`
 * of its `ChildHandle` (agent-child.ts). The machine tells the supervisor
 * what happened by the events it emits (`started`, `startFailed`, `exited`,
 * `stopped`). `exited` waits for the decision; it is not a state clients see,
 * and the supervisor decides before its exit is reported back, so the next
 * visible state follows at once.
 *
 * The per-message path (mailbox, dispatch, output routing) runs beside the
 * machine in dispatcher.ts: a transition costs about 5 µs here, and two per
 * message would cap the server near 100k msg/s. So `executing` is not a state
 * of the machine (agent-view.ts shows `running` as `executing` while a
 * message is in flight), and the idle timer is lazy: when it fires it asks
 * the port how long the agent has really been idle, and either hibernates or
 * waits for what is left. One transition per idle period, none per message.
 *
 * Every visible state change carries a `reason`, kept in context, which the
 * host writes to the log line and the bus event of the transition.
 */
import { assign, emit, fromPromise, setup } from 'xstate';
import { abnormalExit, normalExit, type ChildDecision, type ChildExit } from '../../supervisors/index.js';
import type { InstanceHandle, InstanceSnapshot } from '../sandbox/types.js';
import { describeError } from './exit-reason.js';

/** The states clients see (the `AgentState` of the API adds `executing`). */
export const LIFECYCLE_STATES = ['starting', 'running', 'hibernated', 'restarting', 'failed', 'stopping', 'stopped'] as const;
export type LifecycleState = (typeof LIFECYCLE_STATES)[number];

/** What the machine's actors do for one agent, over the executor pool (agent-runtime.ts implements it). */
export interface LifecyclePort {
  /**
   * Instantiates the agent and runs its start functions, or restores
   * `snapshot` into a fresh instance; rejects with the pool's error. An
   * instance that arrives after `signal` aborted is released.
   */
  instantiate(snapshot: InstanceSnapshot | undefined, signal: AbortSignal): Promise<InstanceHandle>;
  /** Takes the instance's memory and globals, then releases it. */
  hibernate(instance: InstanceHandle, signal: AbortSignal): Promise<InstanceSnapshot>;
  /** Waits for the execution in flight, if any, then releases the instance; never rejects. */
  drain(instance: InstanceHandle | undefined): Promise<void>;
  /** Releases now: an execution still running is abandoned (its result discarded, its sender told). */
  release(instance: InstanceHandle): void;
  /** What is left of the idle timeout since the agent's last message; 0 or less once it has been idle that long. */
  idleLeftMs(): number;
  /**
   * An update (agent-upgrade.ts): once no message is in flight, moves the
   * agent to its new module (from the running `instance` or the hibernated
   * `snapshot`) and answers the new instance, the old one released; rejects
   * leaving the old instance or snapshot as it was.
   */
  upgrade(instance: InstanceHandle | undefined, snapshot: InstanceSnapshot | undefined, signal: AbortSignal): Promise<InstanceHandle>;
  /**
   * Moves the running agent to executor worker `workerId`, beside the agents it
   * talks to (agent-relocate.ts): once no message is in flight, its state is
   * restored there and the old instance released; rejects leaving the old one.
   */
  relocate(instance: InstanceHandle, workerId: number, signal: AbortSignal): Promise<InstanceHandle>;
}

export type AgentMachineEvent =
  | ChildDecision
  | { type: 'start'; reason: string }
  | { type: 'kill'; reason: string }
  /** A failed execution, or the loss of its worker: a crash of `instance`, if it is still the agent's. */
  | { type: 'crash'; instance: InstanceHandle; reason: string }
  /** A message waits while the agent is hibernated. */
  | { type: 'wake' }
  /** A stored agent that cannot even be admitted any more. */
  | { type: 'fail'; reason: string }
  /** Its sends kept being refused (DESIGN.md section 9): it goes down as a normal exit, so it is not restarted, and stays failed. */
  | { type: 'quarantine' }
  /** An operator's update of its module at a message boundary (UpdateAgent). */
  | { type: 'upgrade' }
  /** A move to another executor worker, at a message boundary. */
  | { type: 'relocate'; workerId: number };

export type AgentMachineEmitted =
  | { type: 'started' }
  | { type: 'startFailed'; exit: ChildExit }
  | { type: 'exited'; exit: ChildExit }
  | { type: 'stopped' };

export interface AgentMachineInput {
  port: LifecyclePort;
  /** How the agent came to be on this node: the reason of its first start. */
  origin: 'deploy' | 'restore';
  /** 0 disables hibernation. */
  idleTimeoutMs: number;
  startupTimeoutMs: number;
  shutdownTimeoutMs: number;
}

export interface AgentMachineContext extends AgentMachineInput {
  /** Why the machine entered its current state. */
  reason: string;
  /** The crash or failed start being reported. */
  error: unknown;
  instance: InstanceHandle | undefined;
  /** Memory and globals while hibernated. */
  snapshot: InstanceSnapshot | undefined;
  /** The running state's next idle timer (the full timeout, or what is left of it). */
  idleDelayMs: number;
  /** Whether a start ever succeeded: a restored agent that never started stays listed as failed. */
  started: boolean;
}

const reasonOf = (event: AgentMachineEvent): string => ('reason' in event ? event.reason : '');
const KILL = { target: '#agent.stopped', actions: ['releaseInstance', 'killed'] } as const;
/** The reason of a quarantined agent's exit and of its failed state. */
export const QUARANTINED = 'quarantined';
const QUARANTINE = { target: '#agent.exited', actions: ['releaseInstance', 'quarantined', 'reportQuarantine'] } as const;
const STOP = { target: '#agent.stopping', actions: 'because' } as const;

export const agentMachine = setup({
  types: {
    context: {} as AgentMachineContext,
    events: {} as AgentMachineEvent,
    input: {} as AgentMachineInput,
    emitted: {} as AgentMachineEmitted,
  },
  actors: {
    instantiate: fromPromise<InstanceHandle, { port: LifecyclePort; snapshot: InstanceSnapshot | undefined }>(({ input, signal }) => input.port.instantiate(input.snapshot, signal)),
    hibernate: fromPromise<InstanceSnapshot, { port: LifecyclePort; instance: InstanceHandle }>(({ input, signal }) => input.port.hibernate(input.instance, signal)),
    drain: fromPromise<void, { port: LifecyclePort; instance: InstanceHandle | undefined }>(({ input }) => input.port.drain(input.instance)),
    upgrade: fromPromise<InstanceHandle, { port: LifecyclePort; instance: InstanceHandle | undefined; snapshot: InstanceSnapshot | undefined }>(({ input, signal }) =>
      input.port.upgrade(input.instance, input.snapshot, signal),
    ),
    relocate: fromPromise<InstanceHandle, { port: LifecyclePort; instance: InstanceHandle; workerId: number }>(({ input, signal }) =>
      input.port.relocate(input.instance, input.workerId, signal),
    ),
  },
  actions: {
    because: assign({ reason: ({ event }) => reasonOf(event) }),
    killed: assign({ reason: ({ event }) => `killed: ${reasonOf(event)}`, instance: undefined }),
    releaseInstance: ({ context }) => {
      if (context.instance !== undefined) context.port.release(context.instance);
    },
    reportExit: emit(({ context }) => ({ type: 'exited' as const, exit: abnormalExit(context.reason, context.error) })),
    quarantined: assign({ reason: QUARANTINED, error: undefined, instance: undefined }),
    reportQuarantine: emit({ type: 'exited' as const, exit: normalExit(QUARANTINED) }),
    reportStartFailed: emit(({ context }) => ({ type: 'startFailed' as const, exit: abnormalExit(context.reason, context.error) })),
    rearmIdle: assign({ idleDelayMs: ({ context }) => Math.max(1, context.port.idleLeftMs()) }),
  },
  guards: {
    ownInstance: ({ context, event }) => event.type === 'crash' && event.instance === context.instance,
    idleNow: ({ context }) => context.idleTimeoutMs > 0 && context.port.idleLeftMs() <= 0,
    hibernates: ({ context }) => context.idleTimeoutMs > 0,
    neverStarted: ({ context }) => context.origin === 'restore' && !context.started,
    quarantined: ({ context }) => context.reason === QUARANTINED,
  },
  delays: {
    idle: ({ context }) => context.idleDelayMs,
    startup: ({ context }) => context.startupTimeoutMs,
    shutdown: ({ context }) => context.shutdownTimeoutMs,
  },
}).createMachine({
  id: 'agent',
  initial: 'created',
  context: ({ input }) => ({ ...input, reason: input.origin, error: undefined, instance: undefined, snapshot: undefined, idleDelayMs: input.idleTimeoutMs, started: false }),
  states: {
    created: {
      on: {
        start: { target: 'starting', actions: assign({ reason: ({ context }) => context.origin }) },
        fail: { target: 'failed', actions: 'because' },
      },
    },
    starting: {
      invoke: {
        src: 'instantiate',
        input: ({ context }) => ({ port: context.port, snapshot: undefined }),
        onDone: {
          target: 'running',
          actions: [assign({ instance: ({ event }) => event.output, started: true, reason: 'started', idleDelayMs: ({ context }) => context.idleTimeoutMs }), emit({ type: 'started' })],
        },
        onError: { target: 'exited', actions: [assign({ reason: ({ event }) => `start_failed: ${describeError(event.error)}`, error: ({ event }) => event.error }), 'reportStartFailed'] },
      },
      after: { startup: { target: 'exited', actions: [assign({ reason: 'start_timeout', error: undefined }), 'reportStartFailed'] } },
      on: { stop: STOP, kill: KILL },
    },
    running: {
      initial: 'active',
      states: {
        active: {
          after: {
            idle: [
              { guard: 'idleNow', target: 'hibernating' },
              { guard: 'hibernates', target: 'active', reenter: true, actions: 'rearmIdle' },
            ],
          },
          on: { upgrade: 'upgrading', relocate: 'relocating' },
        },
        // As `upgrading`: nothing is dispatched while the agent moves; a move that fails leaves it where it was.
        relocating: {
          invoke: {
            src: 'relocate',
            input: ({ context, event }) => ({ port: context.port, instance: context.instance!, workerId: event.type === 'relocate' ? event.workerId : -1 }),
            onDone: { target: 'active', actions: assign({ instance: ({ event }) => event.output }) },
            onError: 'active',
          },
        },
        // Not `active`: nothing is dispatched meanwhile, and the idle timer waits.
        upgrading: {
          invoke: {
            src: 'upgrade',
            input: ({ context }) => ({ port: context.port, instance: context.instance, snapshot: undefined }),
            onDone: { target: 'active', actions: assign({ instance: ({ event }) => event.output, idleDelayMs: ({ context }) => context.idleTimeoutMs }) },
            onError: 'active',
          },
        },
        hibernating: {
          invoke: {
            src: 'hibernate',
            input: ({ context }) => ({ port: context.port, instance: context.instance! }),
            onDone: { target: '#agent.hibernated', actions: assign({ snapshot: ({ event }) => event.output, instance: undefined, reason: 'idle' }) },
            onError: {
              target: '#agent.exited',
              actions: ['releaseInstance', assign({ reason: ({ event }) => `hibernate_failed: ${describeError(event.error)}`, error: ({ event }) => event.error, instance: undefined }), 'reportExit'],
            },
          },
        },
      },
      on: {
        crash: { guard: 'ownInstance', target: 'exited', actions: ['releaseInstance', assign({ reason: ({ event }) => reasonOf(event), error: undefined, instance: undefined }), 'reportExit'] },
        quarantine: QUARANTINE,
        stop: STOP,
        kill: KILL,
      },
    },
    hibernated: {
      initial: 'asleep',
      states: {
        asleep: { on: { wake: 'waking', upgrade: 'upgrading' } },
        upgrading: {
          invoke: {
            src: 'upgrade',
            input: ({ context }) => ({ port: context.port, instance: undefined, snapshot: context.snapshot }),
            onDone: {
              target: '#agent.running',
              actions: assign({ instance: ({ event }) => event.output, snapshot: undefined, reason: 'updated', idleDelayMs: ({ context }) => context.idleTimeoutMs }),
            },
            onError: 'asleep',
          },
        },
        waking: {
          invoke: {
            src: 'instantiate',
            input: ({ context }) => ({ port: context.port, snapshot: context.snapshot }),
            onDone: {
              target: '#agent.running',
              actions: assign({ instance: ({ event }) => event.output, snapshot: undefined, reason: 'message', idleDelayMs: ({ context }) => context.idleTimeoutMs }),
            },
            onError: { target: '#agent.exited', actions: [assign({ reason: ({ event }) => `wake_failed: ${describeError(event.error)}`, error: ({ event }) => event.error, snapshot: undefined }), 'reportExit'] },
          },
        },
      },
      on: { quarantine: QUARANTINE, stop: STOP, kill: KILL },
    },
    // Down, and the supervisor's decision about it comes next.
    exited: {
      on: {
        restart: { target: 'restarting', actions: 'because' },
        give_up: { target: 'failed', actions: 'because' },
        stop: [
          { guard: 'neverStarted', target: 'failed', actions: assign({ reason: ({ event }) => `restore_failed: ${reasonOf(event)}` }) },
          { guard: 'quarantined', target: 'failed' },
          { target: 'stopped', actions: 'because' },
        ],
      },
    },
    restarting: {
      on: { start: { target: 'starting', actions: 'because' }, stop: { target: 'stopped', actions: 'because' } },
    },
    failed: {
      // `start`: an operator's restart (the supervisor's restartChild) gives it a fresh count.
      on: { start: { target: 'starting', actions: 'because' }, stop: { target: 'stopped', actions: 'because' } },
    },
    stopping: {
      invoke: { src: 'drain', input: ({ context }) => ({ port: context.port, instance: context.instance }), onDone: { target: 'stopped', actions: assign({ instance: undefined }) } },
      after: { shutdown: { target: 'stopped', actions: ['releaseInstance', assign({ reason: 'killed: shutdown_timeout', instance: undefined })] } },
      // A crash while stopping is the stop itself: the drain ends with it.
      on: { kill: KILL },
    },
    // Not final: an operator's restart of a live agent (terminateChild, then restartChild) starts it again.
    stopped: { entry: emit({ type: 'stopped' }), on: { start: { target: 'starting', actions: 'because' } } },
  },
});

export type AgentMachine = typeof agentMachine;

/** The visible state of a machine state value, or undefined for `created` and `exited`. */
export function visibleState(value: unknown): LifecycleState | undefined {
  const name = typeof value === 'string' ? value : Object.keys(value as object)[0];
  return (LIFECYCLE_STATES as readonly string[]).includes(name!) ? (name as LifecycleState) : undefined;
}
