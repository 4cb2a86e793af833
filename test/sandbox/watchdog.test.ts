/** The watchdog's slot protocol and timeout rule, on a simulated clock (no sleeping, no workers). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSlot, createWatchdog, readSlot, slotWriter, type MonotonicClock, type Overrun } from '../../src/sandbox/watchdog.js';

function simulatedClock(): MonotonicClock & { advance(ms: number): void } {
  let now = 1_000_000_000n;
  return {
    nowNs: () => now,
    advance(ms) {
      now += BigInt(ms) * 1_000_000n;
    },
  };
}

function setup(): { clock: ReturnType<typeof simulatedClock>; overruns: Overrun[]; watchdog: ReturnType<typeof createWatchdog> } {
  const clock = simulatedClock();
  const overruns: Overrun[] = [];
  const watchdog = createWatchdog({ executionTimeoutMs: 100, startupTimeoutMs: 500, clock, onOverrun: (o) => overruns.push(o) });
  return { clock, overruns, watchdog };
}

test('a slot reads idle, then what runs and since when, then idle again', () => {
  const clock = simulatedClock();
  const slot = createSlot();
  const writer = slotWriter(slot, clock);
  assert.equal(readSlot(slot), null);
  assert.equal(writer.begin('execute', 42, 3, 7), clock.nowNs());
  assert.deepEqual(readSlot(slot), { kind: 'execute', batch: 42, index: 3, agentIndex: 7, startNs: clock.nowNs() });
  writer.end();
  assert.equal(readSlot(slot), null);
});

test('an execution past the execution timeout is reported once, naming worker, batch item and agent', () => {
  const { clock, overruns, watchdog } = setup();
  const slot = createSlot();
  watchdog.watch(3, slot);
  slotWriter(slot, clock).begin('execute', 9, 4, 5);
  clock.advance(100);
  assert.deepEqual(watchdog.check(), [], 'at the limit is not past it');
  clock.advance(1);
  assert.equal(watchdog.check().length, 1);
  assert.deepEqual(overruns.map((o) => [o.workerId, o.kind, o.batch, o.index, o.agentIndex, o.elapsedMs]), [[3, 'execute', 9, 4, 5, 101]]);
  clock.advance(50);
  assert.deepEqual(watchdog.check(), [], 'reported once');
});

test('a start gets the startup timeout', () => {
  const { clock, watchdog } = setup();
  const slot = createSlot();
  watchdog.watch(0, slot);
  slotWriter(slot, clock).begin('start', 1, 0, 1);
  clock.advance(400);
  assert.deepEqual(watchdog.check(), []);
  clock.advance(101);
  assert.equal(watchdog.check()[0]?.kind, 'start');
});

test('runs that end in time, and unwatched slots, are never reported', () => {
  const { clock, watchdog } = setup();
  const a = createSlot();
  const b = createSlot();
  watchdog.watch(0, a);
  watchdog.watch(1, b);
  const writer = slotWriter(a, clock);
  for (let index = 0; index < 5; index++) {
    writer.begin('execute', 1, index, 1);
    clock.advance(90);
    writer.end();
    assert.deepEqual(watchdog.check(), []);
  }
  slotWriter(b, clock).begin('execute', 1, 0, 2);
  watchdog.unwatch(1);
  clock.advance(1_000);
  assert.deepEqual(watchdog.check(), []);
});

test('a new run on a worker after a report is watched again', () => {
  const { clock, watchdog } = setup();
  const slot = createSlot();
  watchdog.watch(0, slot);
  const writer = slotWriter(slot, clock);
  writer.begin('execute', 1, 0, 1);
  clock.advance(200);
  assert.equal(watchdog.check().length, 1);
  writer.begin('execute', 1, 1, 1);
  clock.advance(101);
  assert.equal(watchdog.check()[0]?.index, 1);
});
