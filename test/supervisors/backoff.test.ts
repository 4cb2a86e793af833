import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  BACKOFF_JITTER,
  BACKOFF_MULTIPLIER,
  DEFAULT_BACKOFF,
  INITIAL_BACKOFF_MS,
  MAX_BACKOFF_MS,
  backoffDelay,
  baseBackoff,
  createFixedRandom,
  resolveBackoff,
  type BackoffOptions,
} from '../../supervisors/index.js';

describe('backoff', () => {
  it('defaults are the named constants', () => {
    assert.deepEqual(DEFAULT_BACKOFF, { initialMs: INITIAL_BACKOFF_MS, multiplier: BACKOFF_MULTIPLIER, maxMs: MAX_BACKOFF_MS, jitter: BACKOFF_JITTER });
    assert.deepEqual(resolveBackoff(), DEFAULT_BACKOFF);
    assert.deepEqual(resolveBackoff({ initialMs: 5 }), { ...DEFAULT_BACKOFF, initialMs: 5 });
  });

  const schedules: Array<[string, BackoffOptions, number[]]> = [
    ['defaults', DEFAULT_BACKOFF, [100, 200, 400, 800, 1600, 3200, 6400, 12_800, 25_600, 30_000, 30_000]],
    ['multiplier 1 is constant', { initialMs: 250, multiplier: 1, maxMs: 1000, jitter: 0 }, [250, 250, 250]],
    ['grpc-like 1.6', { initialMs: 1000, multiplier: 1.6, maxMs: 5000, jitter: 0 }, [1000, 1600, 2560, 4096, 5000]],
    ['zero initial', { initialMs: 0, multiplier: 2, maxMs: 10, jitter: 0 }, [0, 0, 0]],
    ['cap equal to initial', { initialMs: 50, multiplier: 3, maxMs: 50, jitter: 0 }, [50, 50]],
  ];
  for (const [name, options, expected] of schedules) {
    it(`base schedule: ${name}`, () => {
      assert.deepEqual(expected.map((_, i) => Math.round(baseBackoff(i + 1, options))), expected);
    });
  }

  it('a huge attempt number stays at the cap instead of overflowing', () => {
    assert.equal(baseBackoff(10_000, DEFAULT_BACKOFF), MAX_BACKOFF_MS);
  });

  const jitters: Array<[number, number, number]> = [
    // [attempt, random draw, expected delay] with the defaults (±20 %)
    [1, 0.5, 100],
    [1, 0, 80],
    [1, 0.999_999, 120],
    [1, 0.25, 90],
    [3, 0.75, 440],
    [3, 0, 320],
    [20, 0, 24_000],
    [20, 0.999_999, 36_000],
  ];
  for (const [attempt, draw, expected] of jitters) {
    it(`jitter: attempt ${attempt}, draw ${draw} → ${expected} ms`, () => {
      assert.equal(backoffDelay(attempt, DEFAULT_BACKOFF, createFixedRandom(draw)), expected);
    });
  }

  it('without jitter no random number is drawn', () => {
    const random = { next: () => assert.fail('drew a random number') };
    assert.equal(backoffDelay(2, { ...DEFAULT_BACKOFF, jitter: 0 }, random), 200);
  });

  it('every delay lies within base × (1 ± jitter)', () => {
    for (let attempt = 1; attempt <= 12; attempt += 1) {
      const base = baseBackoff(attempt, DEFAULT_BACKOFF);
      for (let draw = 0; draw < 1; draw += 0.01) {
        const delay = backoffDelay(attempt, DEFAULT_BACKOFF, createFixedRandom(draw));
        assert.ok(delay >= Math.floor(base * (1 - BACKOFF_JITTER)) && delay <= Math.ceil(base * (1 + BACKOFF_JITTER)), `${attempt}/${draw}: ${delay}`);
      }
    }
  });

  const invalid: Array<[string, Partial<BackoffOptions>]> = [
    ['negative initial', { initialMs: -1 }],
    ['infinite initial', { initialMs: Infinity }],
    ['multiplier below 1', { multiplier: 0.5 }],
    ['max below initial', { initialMs: 100, maxMs: 50 }],
    ['jitter of 1', { jitter: 1 }],
    ['negative jitter', { jitter: -0.1 }],
    ['NaN jitter', { jitter: Number.NaN }],
  ];
  for (const [name, options] of invalid) {
    it(`refuses ${name}`, () => assert.throws(() => resolveBackoff(options), RangeError));
  }

  for (const attempt of [0, -1, 1.5, Number.NaN]) {
    it(`refuses attempt ${attempt}`, () => assert.throws(() => baseBackoff(attempt, DEFAULT_BACKOFF), RangeError));
  }
});
