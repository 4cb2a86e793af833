import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_INTENSITY, exceedsIntensity, recordRestart, resolveIntensity, type Intensity } from '../../supervisors/index.js';

/** Records each time in turn and returns the count after each. */
function counts(times: number[], intensity: Intensity): number[] {
  const history: number[] = [];
  return times.map((now) => recordRestart(history, now, intensity));
}

describe('restart intensity', () => {
  const cases: Array<[string, Intensity, number[], number[], boolean[]]> = [
    // [name, intensity, restart times, counts after each, exceeded after each]
    ['spaced out, never exceeds', { maxRestarts: 1, periodMs: 1000 }, [0, 1000, 2000, 3000], [1, 1, 1, 1], [false, false, false, false]],
    ['two within the period exceed 1', { maxRestarts: 1, periodMs: 1000 }, [0, 999], [1, 2], [false, true]],
    ['the boundary has left the window', { maxRestarts: 1, periodMs: 1000 }, [0, 1000], [1, 1], [false, false]],
    ['3 in 5 s', { maxRestarts: 3, periodMs: 5000 }, [0, 1000, 2000, 3000, 4000], [1, 2, 3, 4, 4], [false, false, false, true, true]],
    ['window slides', { maxRestarts: 2, periodMs: 100 }, [0, 50, 120, 160, 230, 240], [1, 2, 2, 2, 2, 3], [false, false, false, false, false, true]],
    ['zero tolerates none', { maxRestarts: 0, periodMs: 1000 }, [0], [1], [true]],
    ['same instant', { maxRestarts: 2, periodMs: 10 }, [5, 5, 5], [1, 2, 3], [false, false, true]],
  ];
  for (const [name, intensity, times, expectedCounts, expectedExceeded] of cases) {
    it(name, () => {
      const got = counts(times, intensity);
      assert.deepEqual(got, expectedCounts);
      assert.deepEqual(
        got.map((count) => exceedsIntensity(count, intensity)),
        expectedExceeded,
      );
    });
  }

  it('keeps at most maxRestarts + 1 times per child, however many restarts', () => {
    const history: number[] = [];
    const intensity = { maxRestarts: 3, periodMs: 1_000_000 };
    for (let now = 0; now < 10_000; now += 1) recordRestart(history, now, intensity);
    assert.deepEqual(history, [9996, 9997, 9998, 9999]);
  });

  it('defaults and validation', () => {
    assert.deepEqual(resolveIntensity(), DEFAULT_INTENSITY);
    assert.deepEqual(resolveIntensity({ maxRestarts: 0 }), { ...DEFAULT_INTENSITY, maxRestarts: 0 });
    for (const bad of [{ maxRestarts: -1 }, { maxRestarts: 1.5 }, { maxRestarts: Infinity }, { periodMs: 0 }, { periodMs: Infinity }, { periodMs: Number.NaN }]) {
      assert.throws(() => resolveIntensity(bad), RangeError, JSON.stringify(bad));
    }
  });
});
