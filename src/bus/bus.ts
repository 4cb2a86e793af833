/**
 * The message bus: every sent, delivered and platform-generated message and
 * every lifecycle transition is published once and fanned out to filtered
 * subscribers through one RxJS `Subject`.
 *
 * Two ways to listen:
 * - `subscribe(filter)`: a plain Observable, pushed synchronously from
 *   `publish`. A synchronous observer (history, metrics, a test) cannot fall
 *   behind: each event is handled before `publish` returns.
 * - `connect(filter, write)`: for a consumer that writes asynchronously (a
 *   WebSocket, a gRPC stream). A bounded queue sits between the bus and the
 *   write; past `bufferSize` waiting events (or `bufferBytes` of them) the subscription ends with
 *   RESOURCE_EXHAUSTED `slow_consumer` (see bounded-sink.ts). This is the only
 *   place an event can wait, so memory per subscriber is bounded.
 *
 * The per-event path allocates nothing beyond the event the publisher made:
 * filters are closures compiled once per subscription.
 */
import { Observable, Subject } from 'rxjs';
import { createBoundedSink, type BoundedSink, type SinkWrite } from './bounded-sink.js';
import type { BusEvent, MessageEvent } from './events.js';
import { compileFilter, type BusFilter } from './filter.js';
import { createIdGenerator } from './message-id.js';
import { messageBytes } from './message-size.js';
import { canReportFailure, failureMessage, FAILURE_REASONS, type CompleteOptions, type FailureReason, type Message } from './message.js';

/** Events a slow subscriber may lag by before it is dropped: about a second of a busy agent's traffic. */
export const DEFAULT_SUBSCRIBER_BUFFER = 1024;

export interface MessageBusOptions extends Partial<CompleteOptions> {
  /** Default `bufferSize` of `connect`. */
  subscriberBufferSize?: number;
}

export interface ConnectOptions {
  bufferSize?: number;
  /** Bytes of events that may wait (message-size.ts); unbounded when absent. */
  bufferBytes?: number;
}

/** What a lifecycle event holds, as the stream buffers count it. */
const LIFECYCLE_EVENT_BYTES = 256;

const eventBytes = (event: BusEvent): number => (event.kind === 'message' ? messageBytes(event.message) : LIFECYCLE_EVENT_BYTES);

export interface MessageBusStats {
  /** Events published since start. */
  published: number;
  messages: number;
  lifecycle: number;
  /** Subscriptions open now (both kinds). */
  subscribers: number;
  /** Subscriptions ended for falling behind. */
  slowConsumers: number;
  /** Events those subscriptions never got. */
  droppedEvents: number;
  /** Messages that could not be delivered or handled, by reason (each is an error). */
  failures: Record<FailureReason, number>;
  /** FIPA `failure` messages sent back; fewer than the failures when the original was itself a failure. */
  failureReplies: number;
}

export interface MessageBus {
  publish(event: BusEvent): void;
  /** Synchronous push of the events `filter` matches; completes when the bus closes. */
  subscribe(filter?: BusFilter): Observable<BusEvent>;
  /** Writes the events `filter` matches through `write`, bounded; see the module comment. */
  connect(filter: BusFilter, write: SinkWrite<BusEvent>, options?: ConnectOptions): BoundedSink;
  /**
   * Records that `original` could not be delivered or handled, and publishes
   * the platform's FIPA `failure` to its sender (direction `platform`).
   * Returns that failure for the caller to deliver to an agent sender's
   * mailbox, or undefined when none is due (see `canReportFailure`).
   */
  reportFailure(original: Message, reason: FailureReason, detail?: string): Message | undefined;
  stats(): MessageBusStats;
  /** Completes every subscription; later publishes are ignored. */
  close(): void;
}

export function createMessageBus(options: MessageBusOptions = {}): MessageBus {
  const subject = new Subject<BusEvent>();
  const defaultBuffer = options.subscriberBufferSize ?? DEFAULT_SUBSCRIBER_BUFFER;
  // A bus of its own has an id generator of its own: a server passes the one it mints every id with.
  const completeOptions: CompleteOptions = { newId: options.newId ?? createIdGenerator() };
  if (options.now) completeOptions.now = options.now;
  const counters = {
    published: 0,
    messages: 0,
    lifecycle: 0,
    subscribers: 0,
    slowConsumers: 0,
    droppedEvents: 0,
    failureReplies: 0,
  };
  const failures = Object.fromEntries(FAILURE_REASONS.map((r) => [r, 0])) as Record<FailureReason, number>;
  let closed = false;

  function publish(event: BusEvent): void {
    if (closed) return;
    counters.published++;
    if (event.kind === 'message') counters.messages++;
    else counters.lifecycle++;
    subject.next(event);
  }

  function subscribe(filter: BusFilter = {}): Observable<BusEvent> {
    const matches = compileFilter(filter);
    return new Observable<BusEvent>((subscriber) => {
      counters.subscribers++;
      const inner = subject.subscribe({
        next: (event) => {
          if (matches(event)) subscriber.next(event);
        },
        complete: () => subscriber.complete(),
      });
      return () => {
        counters.subscribers--;
        inner.unsubscribe();
      };
    });
  }

  return {
    publish,
    subscribe,
    connect(filter, write, connectOptions = {}) {
      return createBoundedSink(subscribe(filter), write, {
        bufferSize: connectOptions.bufferSize ?? defaultBuffer,
        ...(connectOptions.bufferBytes === undefined ? {} : { bufferBytes: connectOptions.bufferBytes, sizeOf: eventBytes }),
        onOverflow: (dropped) => {
          counters.slowConsumers++;
          counters.droppedEvents += dropped;
        },
      });
    },
    reportFailure(original, reason, detail) {
      failures[reason]++;
      if (!canReportFailure(original)) return undefined;
      const reply = failureMessage(original, reason, detail === undefined ? completeOptions : { ...completeOptions, detail });
      counters.failureReplies++;
      const event: MessageEvent = { kind: 'message', direction: 'platform', message: reply };
      publish(event);
      return reply;
    },
    stats: () => ({ ...counters, failures: { ...failures } }),
    close() {
      if (closed) return;
      closed = true;
      subject.complete();
    },
  };
}
