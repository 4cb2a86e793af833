import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createSimulatedClock } from '../../supervisors/clock-simulated.js';
import { createStallableClock } from '../../src/cluster/stallable-clock.js';

describe('stallable clock', () => {
  it('runs timers on time while awake', () => {
    const base = createSimulatedClock(0);
    const clock = createStallableClock(base);
    const fired: number[] = [];
    clock.setTimeout(() => fired.push(clock.now()), 100);
    base.increment(100);
    assert.deepEqual(fired, [100]);
    assert.equal(clock.loopDelay.takeMaxDelayMs(), 0);
  });

  it('a stall holds timers and arrivals; at its end timers run first, in order, then arrivals', () => {
    const base = createSimulatedClock(0);
    const clock = createStallableClock(base);
    const log: string[] = [];
    clock.setTimeout(() => log.push(`timer 200 at ${clock.now()}`), 200);
    clock.setTimeout(() => log.push(`timer 100 at ${clock.now()}`), 100);
    const cancelled = clock.setTimeout(() => log.push('cancelled'), 150);
    clock.stall(500);
    assert.equal(clock.stalled, true);
    base.increment(50);
    clock.deliver(() => log.push(`packet at ${clock.now()}`));
    clock.clearTimeout(cancelled);
    base.increment(449);
    assert.deepEqual(log, []);
    base.increment(1);
    assert.deepEqual(log, ['timer 100 at 500', 'timer 200 at 500', 'packet at 500']);
    assert.equal(clock.stalled, false);
    assert.equal(clock.loopDelay.takeMaxDelayMs(), 400, 'the 100 ms timer ran 400 ms late');
    assert.equal(clock.loopDelay.takeMaxDelayMs(), 0, 'read once');
  });

  it('a stall during a stall extends it', () => {
    const base = createSimulatedClock(0);
    const clock = createStallableClock(base);
    let ran = 0;
    clock.setTimeout(() => ran++, 10);
    clock.stall(100);
    base.increment(50);
    clock.stall(100);
    base.increment(99);
    assert.equal(ran, 0);
    base.increment(1);
    assert.equal(ran, 1);
  });
});
