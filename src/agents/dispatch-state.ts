/**
 * The dispatcher's fields of an agent (dispatcher.ts): kept on the agent
 * itself, which extends this, so the message path reads them without a
 * lookup.
 */
import type { Span } from '@opentelemetry/api';
import type { TimerHandle } from '../../supervisors/index.js';
import type { Message } from '../bus/message.js';
import type { Borrower, ExecutionResult, InstanceHandle } from '../sandbox/types.js';

export class DispatchState {
  /** The message being handled; one at a time. */
  inFlight: Message | undefined = undefined;
  /** When it was accepted. */
  inFlightSince = 0;
  /** The instance handling it: a result that comes back after a restart or a kill belongs to that one. */
  inFlightOn: InstanceHandle | undefined = undefined;
  /** Its `svc.agent.execute` span, when its trace is recorded (message-trace.ts). */
  inFlightSpan: Span | undefined = undefined;
  /** The dispatcher's result callback for this agent, made once. */
  settled: ((result: ExecutionResult) => void) | undefined = undefined;
  vtime = 0;
  /** In the dispatcher's backlog. */
  queued = false;
  /** Set while the agent waits out its CPU quota. */
  throttle: TimerHandle | undefined = undefined;
  throttledCount = 0;
  /** Time held back by the CPU quota with messages waiting, ms (`throttled_seconds`). */
  throttledMs = 0;
  /** `clock.now()` of the last dispatch or result, for the idle timer. */
  lastActiveAt = 0;
  /** Lent to a batch for worker-local delivery (agent-lender.ts): busy until the batch is back. */
  lent = false;
  /** The instance it was lent on. */
  lentOn: InstanceHandle | undefined = undefined;
  /** What the pool calls for its hops and at the loan's end, made once. */
  borrower: Borrower | undefined = undefined;
  /** The id of the agent it last sent a message to: a batch borrows the agents its agents talk to. */
  lastPeer: string | undefined = undefined;
}
