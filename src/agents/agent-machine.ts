/**
 * The lifecycle of one agent as an XState v5 machine (DESIGN.md section 6).
 *
 * It governs the lifecycle only: the per-message path (mailbox, dispatch,
 * routing) runs beside it in dispatcher.ts, because a transition costs about
 * 5 µs here and two per message would cap the server near 100k msg/s. So
 * `executing` is not a state of the machine: the dispatcher knows whether an
 * execution is in flight, and agent-view.ts shows `running` as `executing`
 * while one is.
 *
 * Who sends what:
 * - the agent supervisor's transitions, forwarded by the host: `START`
 *   (starting), `UP` (running), `RESTARTING`, `FAILED`, `STOP` (stopping),
 *   `STOPPED`. Restart decisions, backoff, intensity, start and shutdown
 *   timeouts are the supervisor's (supervisors/), not repeated here;
 * - the agent's incarnation: `HIBERNATED` once its instance is snapshotted
 *   and released, `WOKE` once restored;
 * - the machine itself: the idle timer. Resetting it on every message would
 *   cost a transition per message, so it is lazy: when it fires it emits
 *   `idle`, and the agent either hibernates or answers `ACTIVE` with the time
 *   left since its last message, which re-arms the timer for that long. One
 *   event per idle period, none per message.
 *
 * Every state change carries a `reason`, kept in context, which the host
 * writes to the log line and the bus event of the transition.
 */
import { assign, emit, setup } from 'xstate';

/** The machine's states; the client-visible `AgentState` adds `executing`. */
export const LIFECYCLE_STATES = ['starting', 'running', 'hibernated', 'restarting', 'failed', 'stopping', 'stopped'] as const;
export type LifecycleState = (typeof LIFECYCLE_STATES)[number];

export type AgentMachineEvent =
  | { type: 'START'; reason: string }
  | { type: 'UP'; reason: string }
  | { type: 'RESTARTING'; reason: string }
  | { type: 'FAILED'; reason: string }
  | { type: 'STOP'; reason: string }
  | { type: 'STOPPED'; reason: string }
  | { type: 'HIBERNATED'; reason: string }
  | { type: 'WOKE'; reason: string }
  | { type: 'ACTIVE'; delayMs: number };

export interface AgentMachineContext {
  /** Why the machine entered its current state. */
  reason: string;
  /** 0 disables hibernation. */
  idleTimeoutMs: number;
  /** The running state's next idle timer (the full timeout, or what is left of it). */
  idleDelayMs: number;
}

export interface AgentMachineInput {
  idleTimeoutMs: number;
  /** The reason of the first state, `starting`: `deploy` or `restore`. */
  reason: string;
}

const RESTARTING = { target: 'restarting', actions: 'because' } as const;
const FAILED = { target: 'failed', actions: 'because' } as const;
const STOP = { target: 'stopping', actions: 'because' } as const;
const STOPPED = { target: 'stopped', actions: 'because' } as const;

export const agentMachine = setup({
  types: {
    context: {} as AgentMachineContext,
    events: {} as AgentMachineEvent,
    input: {} as AgentMachineInput,
    emitted: {} as { type: 'idle' },
  },
  actions: {
    because: assign({ reason: ({ event }) => ('reason' in event ? event.reason : '') }),
    fullIdle: assign({ idleDelayMs: ({ context }) => context.idleTimeoutMs }),
  },
  guards: {
    hibernates: ({ context }) => context.idleTimeoutMs > 0,
  },
  delays: {
    idle: ({ context }) => context.idleDelayMs,
  },
}).createMachine({
  id: 'agent',
  initial: 'starting',
  context: ({ input }) => ({ reason: input.reason, idleTimeoutMs: input.idleTimeoutMs, idleDelayMs: input.idleTimeoutMs }),
  states: {
    starting: {
      on: { UP: { target: 'running', actions: ['because', 'fullIdle'] }, RESTARTING, FAILED, STOP, STOPPED },
    },
    running: {
      after: { idle: { guard: 'hibernates', actions: emit({ type: 'idle' }) } },
      on: {
        HIBERNATED: { target: 'hibernated', actions: 'because' },
        ACTIVE: { target: 'running', reenter: true, actions: assign({ idleDelayMs: ({ event }) => Math.max(1, event.delayMs) }) },
        RESTARTING,
        FAILED,
        STOP,
        STOPPED,
      },
    },
    hibernated: {
      on: { WOKE: { target: 'running', actions: ['because', 'fullIdle'] }, RESTARTING, FAILED, STOP, STOPPED },
    },
    // Neither has an instance, so a stop goes straight to `stopped`, as the supervisor reports it.
    restarting: {
      on: { START: { target: 'starting', actions: 'because' }, FAILED, STOPPED },
    },
    failed: {
      // START: an operator's restart (the supervisor's restartChild) gives it a fresh count.
      on: { START: { target: 'starting', actions: 'because' }, STOPPED },
    },
    stopping: {
      // A crash while stopping is the stop itself: no RESTARTING or FAILED here.
      on: { STOPPED },
    },
    stopped: { type: 'final' },
  },
});

export type AgentMachine = typeof agentMachine;
