import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { CPU_QUOTA_WINDOW_MS, createCpuBudget } from '../../src/agents/cpu-budget.js';

const MS = 1_000_000;

describe('cpu budget', () => {
  it('0 and a whole core or more mean no quota', () => {
    for (const millicores of [0, 1000, 4000]) {
      const budget = createCpuBudget(millicores, 0);
      budget.charge(0, 10_000 * MS);
      assert.equal(budget.readyAt(0), 0);
      assert.equal(budget.usedNs, 10_000 * MS);
    }
  });

  it('100m: a window of idleness buys 100 ms at once; the overshoot is paid back at the quota rate', () => {
    const budget = createCpuBudget(100, 0);
    assert.equal(CPU_QUOTA_WINDOW_MS, 1_000);
    budget.charge(0, 99 * MS);
    assert.equal(budget.readyAt(0), 0, '1 ms left');
    budget.charge(0, 401 * MS);
    // 400 ms in debt, earned back at 0.1 ms per ms: 4,000 ms, and a little more to be strictly positive.
    assert.equal(budget.readyAt(0), 4_001);
    assert.equal(budget.readyAt(4_000), 4_001);
    assert.equal(budget.readyAt(4_001), 4_001);
    // Idle time beyond the window earns nothing more.
    assert.equal(budget.readyAt(100_000), 100_000);
    budget.charge(100_000, 100 * MS);
    assert.ok(budget.readyAt(100_000) > 100_000);
  });

  it('whatever the execution lengths, usage over a run stays within quota × time + one window + one execution', () => {
    fc.assert(
      fc.property(fc.integer({ min: 10, max: 900 }), fc.array(fc.integer({ min: 1, max: 300 }), { minLength: 1, maxLength: 200 }), (millicores, lengthsMs) => {
        const budget = createCpuBudget(millicores, 0);
        let now = 0;
        let used = 0;
        for (const length of lengthsMs) {
          now = budget.readyAt(now);
          now += length;
          budget.charge(now, length * MS);
          used += length;
        }
        const allowed = (millicores / 1000) * now + (millicores / 1000) * CPU_QUOTA_WINDOW_MS + Math.max(...lengthsMs);
        return used <= allowed + 1e-6;
      }),
    );
  });
});
