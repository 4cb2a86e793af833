import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Subject, from, throwError } from 'rxjs';
import { SvcError } from '../../src/errors/svc-error.js';
import { createBoundedSink } from '../../src/bus/bounded-sink.js';

/** A write that holds each item until the test releases it. */
function gatedWrite<T>() {
  const written: T[] = [];
  const gates: Array<() => void> = [];
  return {
    written,
    write: (item: T) =>
      new Promise<void>((resolve) => {
        gates.push(() => {
          written.push(item);
          resolve();
        });
      }),
    /** Releases the write in flight and lets the sink start the next. */
    async release(): Promise<void> {
      gates.shift()?.();
      await new Promise((r) => setImmediate(r));
    },
    get pending() {
      return gates.length;
    },
  };
}

test('a synchronous write never queues; done resolves when the source completes', async () => {
  const seen: number[] = [];
  const sink = createBoundedSink(from([1, 2, 3]), (n: number) => void seen.push(n), { bufferSize: 1 });
  await sink.done;
  assert.deepEqual(seen, [1, 2, 3]);
  assert.equal(sink.highWater, 0);
  assert.equal(sink.written, 3);
  assert.ok(sink.closed);
});

test('an asynchronous write gets items one at a time, in order, and done waits for the last', async () => {
  const source = new Subject<number>();
  const gate = gatedWrite<number>();
  const sink = createBoundedSink(source, gate.write, { bufferSize: 4 });
  for (const n of [1, 2, 3, 4]) source.next(n);
  source.complete();
  assert.equal(gate.pending, 1, 'one write in flight');
  assert.equal(sink.buffered, 3);
  let finished = false;
  void sink.done.then(() => (finished = true));
  for (let k = 0; k < 3; k++) await gate.release();
  assert.equal(finished, false);
  await gate.release();
  assert.equal(finished, true);
  assert.deepEqual(gate.written, [1, 2, 3, 4]);
});

test('one item past the buffer ends the sink with RESOURCE_EXHAUSTED slow_consumer and unsubscribes', async () => {
  const source = new Subject<number>();
  const gate = gatedWrite<number>();
  const overflows: number[] = [];
  const sink = createBoundedSink(source, gate.write, { bufferSize: 3, onOverflow: (d) => overflows.push(d) });
  for (let n = 0; n < 4; n++) source.next(n); // 1 in flight + 3 queued
  assert.equal(sink.closed, false);
  assert.equal(source.observed, true);
  source.next(4);
  assert.ok(sink.closed);
  assert.equal(source.observed, false, 'the source is released');
  assert.equal(sink.buffered, 0, 'the queue is dropped');
  assert.deepEqual(overflows, [4]);
  await assert.rejects(sink.done, (error: unknown) => {
    assert.ok(error instanceof SvcError);
    assert.equal(error.code, 'RESOURCE_EXHAUSTED');
    assert.deepEqual(error.metadata, { reason: 'slow_consumer', dropped: '4', buffer_size: '3' });
    return true;
  });
  await gate.release();
  assert.deepEqual(gate.written, [0], 'the write in flight may finish; nothing more is written');
});

test('a consumer that catches up is never dropped, however many items pass', async () => {
  const source = new Subject<number>();
  const gate = gatedWrite<number>();
  const sink = createBoundedSink(source, gate.write, { bufferSize: 2 });
  for (let n = 0; n < 300; n++) {
    source.next(n);
    if (n % 2 === 1) {
      await gate.release();
      await gate.release();
    }
  }
  assert.equal(sink.closed, false);
  assert.ok(sink.highWater <= 2);
  sink.close();
  await sink.done;
  assert.equal(source.observed, false);
});

test('close() stops at once and resolves; later items are ignored', async () => {
  const source = new Subject<number>();
  const gate = gatedWrite<number>();
  const sink = createBoundedSink(source, gate.write, { bufferSize: 10 });
  source.next(1);
  source.next(2);
  sink.close();
  await sink.done;
  assert.equal(source.observed, false);
  await gate.release();
  await gate.release();
  assert.deepEqual(gate.written, [1]);
});

test('a failing write ends the sink with its error (thrown or rejected)', async () => {
  const boom = new Error('socket gone');
  const thrown = createBoundedSink(from([1, 2]), () => {
    throw boom;
  }, { bufferSize: 1 });
  await assert.rejects(thrown.done, boom);
  const rejected = createBoundedSink(from([1, 2]), () => Promise.reject(boom), { bufferSize: 1 });
  await assert.rejects(rejected.done, boom);
  const silent = createBoundedSink(from([1]), () => Promise.reject(), { bufferSize: 1 });
  await assert.rejects(silent.done, (error: unknown) => error === undefined, 'a reason-less rejection still fails the sink');
});

test('a source error ends the sink with that error', async () => {
  const error = new SvcError('UNAVAILABLE', 'draining');
  const sink = createBoundedSink(throwError(() => error), () => undefined, { bufferSize: 1 });
  await assert.rejects(sink.done, error);
});

test('a synchronous source that overflows during subscribe is released at once', async () => {
  const gate = gatedWrite<number>();
  const sink = createBoundedSink(from([1, 2, 3, 4, 5]), gate.write, { bufferSize: 2 });
  assert.ok(sink.closed);
  await assert.rejects(sink.done, /fell more than 2 events behind/);
});

test('a rejection nobody awaits does not become an unhandled rejection', async () => {
  let unhandled = 0;
  const onUnhandled = () => unhandled++;
  process.on('unhandledRejection', onUnhandled);
  try {
    createBoundedSink(from([1, 2, 3]), () => new Promise<void>(() => undefined), { bufferSize: 1 });
    // Node reports unhandled rejections once the microtasks of a turn have run: the next turn has seen them all.
    await new Promise((r) => setImmediate(r));
    assert.equal(unhandled, 0);
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
});

test('a bad bufferSize is refused', () => {
  for (const bad of [0, -3, 2.5]) assert.throws(() => createBoundedSink(from([]), () => undefined, { bufferSize: bad }), RangeError);
});

test('a sink counting bytes drops a consumer that falls more than bufferBytes behind; one large item waits alone (issue 41)', async () => {
  const source = new Subject<string>();
  const gate = gatedWrite<string>();
  const sink = createBoundedSink(source, gate.write, { bufferSize: 100, bufferBytes: 10, sizeOf: (s) => s.length });
  source.next('in flight');
  source.next('x'.repeat(50));
  assert.equal(sink.buffered, 1, 'larger than bufferBytes, but alone');
  source.next('y');
  await assert.rejects(sink.done, (e: unknown) => e instanceof SvcError && e.metadata['reason'] === 'slow_consumer' && e.metadata['buffer_bytes'] === '10');
  assert.ok(sink.closed);
});
