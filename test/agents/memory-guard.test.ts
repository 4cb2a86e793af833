import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createMemoryGuard, HEAP_READ_EVERY_CALLS, v8HeapGauge, type HeapGauge } from '../../src/agents/memory-guard.js';

/** A heap whose use the test sets: the guard's seam onto V8. */
function heapAt(limit: number): HeapGauge & { use: number; reads: number } {
  const heap = {
    use: 0,
    reads: 0,
    used: () => {
      heap.reads += 1;
      return heap.use;
    },
    limit: () => limit,
  };
  return heap;
}

test('queued bytes past max_queued_bytes are refused with memory_pressure and admitted again once released', () => {
  const guard = createMemoryGuard({ maxQueuedBytes: 1000, pressureRatio: 0.7, heap: heapAt(1e9) });
  assert.equal(guard.admit(600), null);
  guard.queued(600);
  assert.equal(guard.admit(500), 'memory_pressure');
  guard.released(600);
  assert.equal(guard.admit(500), null);
  assert.equal(guard.queuedBytes, 0);
});

test('a heap past its share refuses admissions and deploys, and reads again on each admission until it shrinks', () => {
  const heap = heapAt(1000);
  const guard = createMemoryGuard({ maxQueuedBytes: 1e9, pressureRatio: 0.7, heap });
  assert.equal(guard.pressured(), false);
  heap.use = 800;
  // Small admissions read the heap only every HEAP_READ_EVERY_CALLS.
  let refusedAt = -1;
  for (let i = 0; i < HEAP_READ_EVERY_CALLS && refusedAt < 0; i++) if (guard.admit(10) !== null) refusedAt = i;
  assert.equal(refusedAt, HEAP_READ_EVERY_CALLS - 1);
  assert.equal(guard.pressured(), true);
  heap.use = 100;
  assert.equal(guard.admit(10), null, 'read again at once under pressure');
});

test('a large admission reads the heap at once', () => {
  const heap = heapAt(1000);
  const guard = createMemoryGuard({ maxQueuedBytes: 1e9, pressureRatio: 0.5, heap });
  guard.admit(1);
  heap.use = 600;
  assert.equal(guard.admit(1024 * 1024), 'memory_pressure');
});

test("V8's own gauge reads a heap in use below its limit", () => {
  assert.ok(v8HeapGauge.used() > 0 && v8HeapGauge.used() < v8HeapGauge.limit());
});
