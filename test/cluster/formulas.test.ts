import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { expectedConfirmations, pushPullIntervalMs, remainingSuspicionMs, retransmitLimit, suspicionTimeoutMs } from '../../src/cluster/formulas.js';

describe('cluster formulas', () => {
  const suspicion: Array<[number, number, number, number]> = [
    // mult, n, probe interval, expected: mult × max(1, log10 n) × interval
    [3, 1, 500, 1500],
    [3, 3, 500, 1500],
    [3, 10, 500, 1500],
    [3, 100, 500, 3000],
    [3, 200, 500, Math.round(3 * Math.log10(200) * 500)],
    [4, 3, 1000, 4000],
    [4, 1000, 1000, 12_000],
    [3, 0, 500, 1500],
  ];
  for (const [mult, n, interval, expected] of suspicion) {
    it(`suspicion timeout: mult ${mult}, ${n} members, ${interval} ms → ${expected} ms`, () => {
      assert.equal(suspicionTimeoutMs(mult, n, interval), expected);
    });
  }

  const retransmits: Array<[number, number, number]> = [
    [4, 1, 4],
    [4, 3, 4],
    [4, 9, 4],
    [4, 10, 8],
    [4, 99, 8],
    [4, 200, 12],
    [2, 1000, 8],
  ];
  for (const [mult, n, expected] of retransmits) {
    it(`retransmit limit: mult ${mult}, ${n} members → ${expected}`, () => assert.equal(retransmitLimit(mult, n), expected));
  }

  const confirmations: Array<[number, number, number]> = [
    [4, 3, 0],
    [4, 4, 2],
    [3, 3, 1],
    [3, 2, 0],
    [1, 50, 0],
    [6, 200, 4],
  ];
  for (const [mult, n, k] of confirmations) {
    it(`confirmations expected: mult ${mult}, ${n} members → ${k}`, () => assert.equal(expectedConfirmations(mult, n), k));
  }

  it('a suspicion shrinks from 6× to 1× as confirmations come in, logarithmically', () => {
    const min = 1000;
    const max = 6000;
    const k = 3;
    const timeouts = [0, 1, 2, 3, 4].map((c) => remainingSuspicionMs(c, k, 0, min, max));
    assert.equal(timeouts[0], max);
    assert.equal(timeouts[3], min);
    assert.equal(timeouts[4], min, 'never below the minimum');
    assert.ok(timeouts[1]! < max && timeouts[1]! > timeouts[2]! && timeouts[2]! > min);
    assert.equal(timeouts[1], Math.floor(max - (Math.log(2) / Math.log(4)) * (max - min)));
  });

  it('the time left counts the time already elapsed, and may be negative', () => {
    assert.equal(remainingSuspicionMs(0, 3, 2500, 1000, 6000), 3500);
    assert.equal(remainingSuspicionMs(3, 3, 2500, 1000, 6000), -1500);
    assert.equal(remainingSuspicionMs(0, 0, 400, 1000, 6000), 600, 'without expected confirmations the minimum holds');
  });

  const pushPull: Array<[number, number]> = [
    [1, 30_000],
    [32, 30_000],
    [33, 60_000],
    [64, 60_000],
    [65, 90_000],
    [200, 30_000 * (Math.ceil(Math.log2(200) - 5) + 1)],
  ];
  for (const [n, expected] of pushPull) {
    it(`push-pull interval at ${n} members → ${expected} ms`, () => assert.equal(pushPullIntervalMs(30_000, n), expected));
  }
});
