import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createTokenBucket } from '../../src/telemetry/token-bucket.js';

test('a full bucket serves its burst, then the refill rate', () => {
  const bucket = createTokenBucket(3, 2, 0);
  assert.deepEqual([bucket.take(0), bucket.take(0), bucket.take(0), bucket.take(0)], [true, true, true, false]);
  assert.equal(bucket.take(499), false, 'just under one token after 499 ms at 2/s');
  assert.equal(bucket.take(500), true);
  assert.equal(bucket.available(60_000), 3, 'never above capacity');
});

test('time stepping back refills nothing and drains nothing', () => {
  const bucket = createTokenBucket(2, 1, 1_000);
  bucket.take(1_000);
  assert.equal(bucket.available(0), 1);
  assert.equal(bucket.available(1_500), 1.5);
});

test('nonsense parameters are programmer errors', () => {
  assert.throws(() => createTokenBucket(0, 1, 0), RangeError);
  assert.throws(() => createTokenBucket(1, 0, 0), RangeError);
  assert.throws(() => createTokenBucket(Number.NaN, 1, 0), RangeError);
});
