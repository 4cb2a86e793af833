/**
 * The bridge from a push Observable to a consumer that writes asynchronously
 * (a WebSocket, a gRPC server stream), with a bounded queue in between.
 *
 * An Observable cannot see whether its consumer keeps up: `next()` returns
 * when the consumer has *accepted* the event, and a consumer that only hands
 * it to a socket accepts at once while the socket's own buffer grows without
 * limit. So demand is signalled by the write function: it returns nothing
 * when the event is written and the consumer can take the next one, or a
 * promise that settles when it can. Events arriving meanwhile queue here, up
 * to `bufferSize` items and `bufferBytes` bytes (by `sizeOf`; one item larger
 * than that still waits alone); one more and the consumer is too slow: the sink
 * unsubscribes from the source, drops the queue and fails with
 * RESOURCE_EXHAUSTED (`reason: slow_consumer`). Memory per consumer is thus at
 * most `bufferSize` events and about `bufferBytes` bytes, however fast the
 * source and however stalled the consumer.
 *
 * Adapters, for the transports:
 * - WebSocket (`ws`): send at once while `ws.bufferedAmount` is under a
 *   high-water mark (return nothing); above it, return a promise of the
 *   frame's `send` callback, so the socket drains before the next write.
 * - gRPC server stream: `(e) => (call.write(toProto(e)) ? undefined : once(call, 'drain'))`.
 */
import { Subscription, type Observable } from 'rxjs';
import { SvcError } from '../errors/svc-error.js';
import { createRingBuffer } from './ring-buffer.js';

/** Returns when the item is written; a promise means "busy until it settles" (a rejection ends the sink). */
export type SinkWrite<T> = (item: T) => void | Promise<unknown>;

export interface BoundedSinkOptions<T> {
  /** Items that may wait while a write is in flight; one more and the sink fails. */
  bufferSize: number;
  /** Bytes that may wait, as `sizeOf` counts them; unbounded without `sizeOf`. */
  bufferBytes?: number;
  sizeOf?: (item: T) => number;
  /** Told how many items were lost when the sink fails for being slow (for the owner's counters). */
  onOverflow?: (dropped: number) => void;
}

export interface BoundedSink {
  /**
   * Settles once: resolves when the source completes and every item is
   * written, or when `close()` is called; rejects with the source's error, a
   * write's error, or RESOURCE_EXHAUSTED `slow_consumer` (metadata `dropped`,
   * `buffer_size`). Never an unhandled rejection, even if nobody awaits it.
   */
  readonly done: Promise<void>;
  /** The consumer is gone (socket closed, call cancelled): unsubscribe and drop the queue. */
  close(): void;
  /** Items waiting now. */
  readonly buffered: number;
  /** The most items that ever waited at once; never above `bufferSize`. */
  readonly highWater: number;
  /** Items whose write completed. */
  readonly written: number;
  readonly closed: boolean;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

/** Subscribes to `source` at once and writes every item through `write`, one at a time, in order. */
export function createBoundedSink<T>(source: Observable<T>, write: SinkWrite<T>, options: BoundedSinkOptions<T>): BoundedSink {
  const { bufferSize, onOverflow, sizeOf } = options;
  const bufferBytes = options.bufferBytes ?? Infinity;
  if (!Number.isInteger(bufferSize) || bufferSize < 1) throw new RangeError(`bufferSize must be a positive integer, got ${bufferSize}`);
  const queue = createRingBuffer<T>(bufferSize);
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const done = new Promise<void>((ok, ko) => {
    resolve = ok;
    reject = ko;
  });
  // The owner may only care about `closed`; a rejection nobody awaits must not crash the process.
  done.catch(() => undefined);

  let ended = false;
  let writing = false;
  let sourceDone = false;
  let highWater = 0;
  let written = 0;
  let queuedBytes = 0;
  // Added to after subscribing: if a synchronous source already ended the sink, `add` unsubscribes at once.
  const subscription = new Subscription();

  function end(outcome: { error: unknown } | undefined): void {
    if (ended) return;
    ended = true;
    subscription.unsubscribe();
    queue.clear();
    queuedBytes = 0;
    if (outcome === undefined) resolve();
    else reject(outcome.error);
  }

  // Boxed, so that even `throw undefined` or `Promise.reject()` counts as a failure.
  const fail = (error: unknown): void => end({ error });

  function afterWrite(): void {
    written++;
    writing = false;
    pump();
  }

  /** Writes queued items until one is in flight; finishes when the source is done and nothing waits. */
  function pump(): void {
    while (!ended && !writing) {
      if (queue.length === 0) {
        if (sourceDone) end(undefined);
        return;
      }
      const item = queue.shift() as T;
      if (sizeOf !== undefined) queuedBytes -= sizeOf(item);
      startWrite(item);
    }
  }

  function startWrite(item: T): void {
    let result: unknown;
    try {
      result = write(item);
    } catch (error) {
      fail(error);
      return;
    }
    if (isThenable(result)) {
      writing = true;
      result.then(() => {
        if (!ended) afterWrite();
      }, fail);
    } else {
      written++;
    }
  }

  function onNext(item: T): void {
    if (ended) return;
    if (!writing && queue.length === 0) {
      startWrite(item);
      return;
    }
    const bytes = sizeOf === undefined ? 0 : sizeOf(item);
    const overBytes = queue.length > 0 && queuedBytes + bytes > bufferBytes;
    if (overBytes || !queue.push(item)) {
      const dropped = queue.length + 1;
      onOverflow?.(dropped);
      const behind = overBytes ? `${bufferBytes} bytes` : `${bufferSize} events`;
      fail(
        new SvcError('RESOURCE_EXHAUSTED', `subscriber fell more than ${behind} behind and was dropped`, {
          reason: 'slow_consumer',
          dropped: String(dropped),
          buffer_size: String(bufferSize),
          ...(overBytes ? { buffer_bytes: String(bufferBytes) } : {}),
        }),
      );
      return;
    }
    queuedBytes += bytes;
    if (queue.length > highWater) highWater = queue.length;
  }

  subscription.add(
    source.subscribe({
      next: onNext,
      error: fail,
      complete: () => {
        sourceDone = true;
        pump();
      },
    }),
  );

  return {
    done,
    close: () => end(undefined),
    get buffered() {
      return queue.length;
    },
    get highWater() {
      return highWater;
    },
    get written() {
      return written;
    },
    get closed() {
      return ended;
    },
  };
}
