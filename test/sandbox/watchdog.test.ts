/** The watchdog's slot protocol and timeout rule, on a simulated clock (no sleeping, no workers). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSimulatedClock } from '../../supervisors/index.js';
import { WATCHDOG_PERIOD_MS, createSlot, createWatchdog, readSlot, slotWriter, type Overrun } from '../../src/sandbox/watchdog.js';

function setup() {
  const clock = createSimulatedClock();
  const overruns: Overrun[] = [];
  const watchdog = createWatchdog({ executionTimeoutMs: 100, startupTimeoutMs: 500, clock, onOverrun: (o) => overruns.push(o) });
  return { clock, overruns, watchdog };
}

test('a slot reads idle, then what runs, then idle again', () => {
  const slot = createSlot();
  const writer = slotWriter(slot);
  assert.equal(readSlot(slot), null);
  writer.begin('execute', 42, 3, 7);
  assert.deepEqual(readSlot(slot), { kind: 'execute', batch: 42, index: 3, agentIndex: 7 });
  writer.end();
  assert.equal(readSlot(slot), null);
});

test('an execution past the execution timeout since it was first seen is reported once, naming worker, batch item and instance', () => {
  const { clock, overruns, watchdog } = setup();
  const slot = createSlot();
  watchdog.watch(3, slot);
  slotWriter(slot).begin('execute', 9, 4, 5);
  assert.deepEqual(watchdog.check(), [], 'first seen');
  clock.increment(100);
  assert.deepEqual(watchdog.check(), [], 'at the limit is not past it');
  clock.increment(1);
  assert.equal(watchdog.check().length, 1);
  assert.deepEqual(overruns.map((o) => [o.workerId, o.kind, o.batch, o.index, o.agentIndex, o.elapsedMs]), [[3, 'execute', 9, 4, 5, 101]]);
  clock.increment(50);
  assert.deepEqual(watchdog.check(), [], 'reported once');
});

test('a start gets the startup timeout', () => {
  const { clock, watchdog } = setup();
  const slot = createSlot();
  watchdog.watch(0, slot);
  slotWriter(slot).begin('start', 1, 0, 1);
  watchdog.check();
  clock.increment(400);
  assert.deepEqual(watchdog.check(), []);
  clock.increment(101);
  assert.equal(watchdog.check()[0]?.kind, 'start');
});

test('runs that end in time, and unwatched slots, are never reported', () => {
  const { clock, watchdog } = setup();
  const a = createSlot();
  const b = createSlot();
  watchdog.watch(0, a);
  watchdog.watch(1, b);
  const writer = slotWriter(a);
  for (let index = 0; index < 5; index++) {
    writer.begin('execute', 1, index, 1);
    watchdog.check();
    clock.increment(90);
    assert.deepEqual(watchdog.check(), []);
    writer.end();
  }
  slotWriter(b).begin('execute', 1, 0, 2);
  watchdog.unwatch(1);
  clock.increment(1_000);
  assert.deepEqual(watchdog.check(), []);
});

test('a new run on a worker after a report is timed again from its own first sighting', () => {
  const { clock, watchdog } = setup();
  const slot = createSlot();
  watchdog.watch(0, slot);
  const writer = slotWriter(slot);
  writer.begin('execute', 1, 0, 1);
  watchdog.check();
  clock.increment(200);
  assert.equal(watchdog.check().length, 1);
  writer.begin('execute', 1, 1, 1);
  assert.deepEqual(watchdog.check(), []);
  clock.increment(101);
  assert.equal(watchdog.check()[0]?.index, 1);
});

test('started, it checks every period on its clock, and stopped, it leaves no timer', async () => {
  const { clock, overruns, watchdog } = setup();
  const slot = createSlot();
  watchdog.watch(0, slot);
  slotWriter(slot).begin('execute', 1, 0, 1);
  watchdog.start();
  clock.increment(WATCHDOG_PERIOD_MS + 100);
  assert.equal(overruns.length, 0, 'seen at the first tick, 100 ms ago');
  clock.increment(WATCHDOG_PERIOD_MS);
  assert.equal(overruns.length, 1);
  watchdog.stop();
  assert.equal(clock.pendingTimers(), 0);
});
