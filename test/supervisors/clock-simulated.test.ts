import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createActor, createMachine } from 'xstate';
import { createRealClock, createSimulatedClock } from '../../supervisors/index.js';

describe('simulated clock', () => {
  it('fires due timers in order of due time, then of arming', () => {
    const clock = createSimulatedClock();
    const fired: string[] = [];
    clock.setTimeout(() => fired.push(`c@${clock.now()}`), 30);
    clock.setTimeout(() => fired.push(`a@${clock.now()}`), 10);
    clock.setTimeout(() => fired.push(`b@${clock.now()}`), 10);
    clock.setTimeout(() => fired.push(`late@${clock.now()}`), 31);
    clock.increment(30);
    assert.deepEqual(fired, ['a@10', 'b@10', 'c@30']);
    assert.equal(clock.now(), 30);
    assert.equal(clock.pendingTimers(), 1);
  });

  it('a timer armed by a timer counts from its own due time, within the same step', () => {
    const clock = createSimulatedClock(1000);
    const fired: number[] = [];
    const chain = (delay: number) =>
      clock.setTimeout(() => {
        fired.push(clock.now());
        if (delay < 800) chain(delay * 2);
      }, delay);
    chain(100);
    clock.increment(10_000);
    assert.deepEqual(fired, [1100, 1300, 1700, 2500]);
  });

  it('cleared timers do not fire; clearing twice or a foreign handle is harmless', () => {
    const clock = createSimulatedClock();
    let fired = false;
    const handle = clock.setTimeout(() => (fired = true), 5);
    clock.clearTimeout(handle);
    clock.clearTimeout(handle);
    clock.clearTimeout({});
    clock.increment(10);
    assert.equal(fired, false);
    assert.equal(clock.pendingTimers(), 0);
  });

  it('set moves to an absolute time and refuses to go back', () => {
    const clock = createSimulatedClock();
    let fired = 0;
    clock.setTimeout(() => (fired += 1), 0);
    clock.set(50);
    assert.equal(fired, 1);
    assert.throws(() => clock.set(49), /cannot move back from 50 to 49/);
    assert.throws(() => clock.increment(Number.NaN), RangeError);
  });

  it('advance lets promise callbacks run between timers', async () => {
    const clock = createSimulatedClock();
    const events: string[] = [];
    clock.setTimeout(() => {
      events.push(`t1@${clock.now()}`);
      void Promise.resolve().then(() => {
        events.push('after t1');
        clock.setTimeout(() => events.push(`t2@${clock.now()}`), 5);
      });
    }, 10);
    await clock.advance(15);
    assert.deepEqual(events, ['t1@10', 'after t1', 't2@15']);
  });

  it('drives an XState actor: one clock for supervisors and agent machines', () => {
    const clock = createSimulatedClock();
    const machine = createMachine({ initial: 'idle', states: { idle: { after: { 300_000: 'hibernated' } }, hibernated: {} } });
    const actor = createActor(machine, { clock }).start();
    clock.increment(299_999);
    assert.equal(actor.getSnapshot().value, 'idle');
    clock.increment(1);
    assert.equal(actor.getSnapshot().value, 'hibernated');
    actor.stop();
  });
});

describe('simulated clock: nextDue', () => {
  it('names the earliest live timer, skipping cleared ones, and nothing once all have fired', () => {
    const clock = createSimulatedClock(100);
    assert.equal(clock.nextDue(), undefined);
    const early = clock.setTimeout(() => undefined, 5);
    clock.setTimeout(() => undefined, 20);
    assert.equal(clock.nextDue(), 105);
    clock.clearTimeout(early);
    assert.equal(clock.nextDue(), 120);
    clock.increment(20);
    assert.equal(clock.nextDue(), undefined);
  });
});

describe('real clock', () => {
  it('is monotonic and fires and clears timers', async () => {
    const clock = createRealClock();
    const before = clock.now();
    let cleared = false;
    clock.clearTimeout(clock.setTimeout(() => (cleared = true), 0));
    await new Promise<void>((resolve) => clock.setTimeout(resolve, 0));
    assert.ok(clock.now() >= before);
    assert.equal(cleared, false);
  });
});
