import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRingBuffer } from '../../src/bus/ring-buffer.js';

test('push refuses when full; shift is FIFO across the wrap', () => {
  const ring = createRingBuffer<number>(3);
  assert.ok(ring.push(1) && ring.push(2) && ring.push(3));
  assert.equal(ring.push(4), false);
  assert.deepEqual(ring.toArray(), [1, 2, 3]);
  assert.equal(ring.shift(), 1);
  assert.ok(ring.push(4));
  assert.deepEqual(ring.toArray(), [2, 3, 4]);
  assert.deepEqual([ring.shift(), ring.shift(), ring.shift(), ring.shift()], [2, 3, 4, undefined]);
  assert.equal(ring.length, 0);
});

test('pushEvicting keeps the newest items and returns the evicted one', () => {
  const ring = createRingBuffer<number>(3);
  const evicted = [1, 2, 3, 4, 5].map((n) => ring.pushEvicting(n));
  assert.deepEqual(evicted, [undefined, undefined, undefined, 1, 2]);
  assert.deepEqual(ring.toArray(), [3, 4, 5]);
  assert.deepEqual(ring.toArray(2), [4, 5]);
  assert.deepEqual(ring.toArray(0), []);
  assert.deepEqual(ring.toArray(10), [3, 4, 5]);
});

test('a long mixed sequence matches an array model', () => {
  const ring = createRingBuffer<number>(5);
  const model: number[] = [];
  let seed = 7;
  for (let n = 0; n < 10_000; n++) {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    const op = seed % 3;
    if (op === 0) {
      assert.equal(ring.push(n), model.length < 5);
      if (model.length < 5) model.push(n);
    } else if (op === 1) {
      ring.pushEvicting(n);
      model.push(n);
      if (model.length > 5) model.shift();
    } else {
      assert.equal(ring.shift(), model.shift());
    }
    assert.equal(ring.length, model.length);
  }
  assert.deepEqual(ring.toArray(), model);
});

test('clear empties; a bad capacity is refused', () => {
  const ring = createRingBuffer<string>(2);
  ring.push('a');
  ring.clear();
  assert.equal(ring.length, 0);
  assert.deepEqual(ring.toArray(), []);
  assert.ok(ring.push('b'));
  for (const bad of [0, -1, 1.5, NaN]) assert.throws(() => createRingBuffer(bad), RangeError);
});
