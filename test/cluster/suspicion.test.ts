import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createSimulatedClock } from '../../supervisors/clock-simulated.js';
import { remainingSuspicionMs } from '../../src/cluster/formulas.js';
import { createSuspicion } from '../../src/cluster/suspicion.js';

function harness(k: number) {
  const clock = createSimulatedClock(0);
  const fired: Array<{ at: number; confirmations: number }> = [];
  const suspicion = createSuspicion({ clock, from: 'a', k, minMs: 1000, maxMs: 6000, onTimeout: (confirmations) => fired.push({ at: clock.now(), confirmations }) });
  return { clock, fired, suspicion };
}

describe('suspicion', () => {
  it('without confirmations it lasts the maximum', () => {
    const { clock, fired } = harness(3);
    clock.increment(5999);
    assert.deepEqual(fired, []);
    clock.increment(1);
    assert.deepEqual(fired, [{ at: 6000, confirmations: 0 }]);
  });

  it('with no confirmations expected it lasts the minimum', () => {
    const { clock, fired } = harness(0);
    clock.increment(1000);
    assert.deepEqual(fired, [{ at: 1000, confirmations: 0 }]);
  });

  it('each independent confirmation brings the deadline closer, down to the minimum', () => {
    const { clock, fired, suspicion } = harness(3);
    clock.increment(200);
    assert.equal(suspicion.confirm('b'), true);
    const expected = 200 + remainingSuspicionMs(1, 3, 200, 1000, 6000);
    clock.increment(100);
    assert.equal(suspicion.confirm('c'), true);
    assert.equal(suspicion.confirm('d'), true);
    assert.equal(suspicion.confirmations, 3);
    assert.ok(expected > 1000);
    clock.increment(699);
    assert.deepEqual(fired, []);
    clock.increment(1);
    assert.deepEqual(fired, [{ at: 1000, confirmations: 3 }]);
  });

  it('counts each accuser once, never the first one, and no more than k', () => {
    const { suspicion } = harness(2);
    assert.equal(suspicion.confirm('a'), false, 'the first accuser');
    assert.equal(suspicion.confirm('b'), true);
    assert.equal(suspicion.confirm('b'), false, 'again');
    assert.equal(suspicion.confirm('c'), true);
    assert.equal(suspicion.confirm('d'), false, 'past k');
    assert.equal(suspicion.confirmations, 2);
  });

  it('a confirmation past the shortened deadline fires at once', () => {
    const { clock, fired, suspicion } = harness(1);
    clock.increment(2000);
    suspicion.confirm('b');
    clock.increment(0);
    assert.deepEqual(fired, [{ at: 2000, confirmations: 1 }]);
  });

  it('a cancelled suspicion never fires', () => {
    const { clock, fired, suspicion } = harness(3);
    suspicion.cancel();
    assert.equal(suspicion.confirm('b'), false);
    clock.increment(10_000);
    assert.deepEqual(fired, []);
    assert.equal(clock.pendingTimers(), 0);
  });
});
