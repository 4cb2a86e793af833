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
 *
 * **Publication only where it is watched.** The bus knows which agents
 * subscriptions filter on and how many take every agent. A message neither
 * of whose agents is watched, while no subscription takes every agent,
 * reaches no subscriber, so it skips the fan-out (and `publishMessage` makes
 * no event object for it): on a busy server most messages are watched by
 * nobody. The server's own bookkeeping (history, counters) sees every
 * message all the same, through `tap`: synchronous listeners that are not
 * subscriptions.
 */
import { Observable, Subject, type OperatorFunction } from 'rxjs';
import { createBoundedSink, type BoundedSink, type SinkWrite } from './bounded-sink.js';
import type { BusEvent, MessageDirection } from './events.js';
import { compileFilter, type BusFilter } from './filter.js';
import { createIdGenerator } from './message-id.js';
import { messageBytes } from './message-size.js';
import { canReportFailure, failureMessage, FAILURE_REASONS, PLATFORM_SENDER, type CompleteOptions, type FailureReason, type Message } from './message.js';

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
  /** Applied to the matching events before they queue: a stream that also takes events from elsewhere (another node). */
  through?: OperatorFunction<BusEvent, BusEvent>;
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

/** Sees every message published, watched or not (`MessageBus.tap`). */
export type MessageTap = (direction: MessageDirection, message: Message) => void;

export interface MessageBus {
  publish(event: BusEvent): void;
  /** `publish` of a message event, made only when a subscription may match it. */
  publishMessage(direction: MessageDirection, message: Message): void;
  /**
   * Calls `listener` for every message event, before the subscribers, until
   * the returned function is called. For the server's own bookkeeping: a tap
   * is no subscription (not counted, never dropped, never completed).
   */
  tap(listener: MessageTap): () => void;
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

  const taps = new Set<MessageTap>();
  /** Subscriptions that take messages of every agent (no `agent_id`), and those per agent they filter on. */
  let everyAgent = 0;
  const watched = new Map<string, number>();

  /** Whether a subscription may match a message between these agents, or a platform failure about one (filter.ts). */
  function watches(message: Message): boolean {
    if (everyAgent > 0) return true;
    if (watched.size === 0) return false;
    if (watched.has(message.sender) || watched.has(message.receiver)) return true;
    const about = message.sender === PLATFORM_SENDER ? message.metadata['failed_receiver'] : undefined;
    return about !== undefined && watched.has(about);
  }

  /** Counts and taps a message; true when it is to be fanned out. */
  function takeMessage(direction: MessageDirection, message: Message): boolean {
    counters.published++;
    counters.messages++;
    for (const listener of taps) listener(direction, message);
    return watches(message);
  }

  function publish(event: BusEvent): void {
    if (closed) return;
    if (event.kind === 'message') {
      if (!takeMessage(event.direction, event.message)) return;
    } else {
      counters.published++;
      counters.lifecycle++;
    }
    subject.next(event);
  }

  function publishMessage(direction: MessageDirection, message: Message): void {
    if (closed || !takeMessage(direction, message)) return;
    subject.next({ kind: 'message', direction, message });
  }

  function watch(agent: string | undefined, by: 1 | -1): void {
    if (agent === undefined || agent === '') {
      everyAgent += by;
      return;
    }
    const count = (watched.get(agent) ?? 0) + by;
    if (count > 0) watched.set(agent, count);
    else watched.delete(agent);
  }

  function subscribe(filter: BusFilter = {}): Observable<BusEvent> {
    const matches = compileFilter(filter);
    return new Observable<BusEvent>((subscriber) => {
      counters.subscribers++;
      watch(filter.agent_id, 1);
      const inner = subject.subscribe({
        next: (event) => {
          if (matches(event)) subscriber.next(event);
        },
        complete: () => subscriber.complete(),
      });
      return () => {
        counters.subscribers--;
        watch(filter.agent_id, -1);
        inner.unsubscribe();
      };
    });
  }

  return {
    publish,
    publishMessage,
    tap(listener) {
      taps.add(listener);
      return () => void taps.delete(listener);
    },
    subscribe,
    connect(filter, write, connectOptions = {}) {
      const events = subscribe(filter);
      return createBoundedSink(connectOptions.through === undefined ? events : events.pipe(connectOptions.through), write, {
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
      publishMessage('platform', reply);
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
