/**
 * The instance's memory budget for work peers hand it: the bytes waiting in
 * all mailboxes together (`runtime.max_queued_bytes`) and the V8 heap
 * (`runtime.memory_pressure_ratio` of its limit). Past either, new work is
 * refused with `memory_pressure` (a client gets RESOURCE_EXHAUSTED, an agent a
 * FIPA `failure`), so the server answers instead of letting V8 abort it.
 *
 * Reading the heap costs a microsecond or two, too much for every message, so
 * it is read again only after `HEAP_READ_EVERY_BYTES` were admitted or
 * `HEAP_READ_EVERY_CALLS` admissions were asked since the last reading:
 * between two readings the heap can grow by little more than one reading's
 * worth of messages. Under pressure it is read on every admission.
 */
import { getHeapStatistics } from 'node:v8';

/** The heap as V8 reports it; a seam so tests can press on it. */
export interface HeapGauge {
  /** Bytes in use on the V8 heap. */
  used(): number;
  /** The heap's limit (`--max-old-space-size` plus the young generation). */
  limit(): number;
}

export const v8HeapGauge: HeapGauge = {
  used: () => getHeapStatistics().used_heap_size,
  limit: () => getHeapStatistics().heap_size_limit,
};

export const HEAP_READ_EVERY_BYTES = 1024 * 1024;
export const HEAP_READ_EVERY_CALLS = 256;

export interface MemoryGuardOptions {
  /** `runtime.max_queued_bytes`. */
  maxQueuedBytes: number;
  /** `runtime.memory_pressure_ratio`: the share of the heap limit past which work is refused. */
  pressureRatio: number;
  heap?: HeapGauge;
}

export interface MemoryGuard {
  /** Whether `bytes` more may be queued: null when they may, `memory_pressure` when not. */
  admit(bytes: number): 'memory_pressure' | null;
  /** Whether the heap is past its share now (read fresh): new agents are refused then. */
  pressured(): boolean;
  queued(bytes: number): void;
  released(bytes: number): void;
  /** Bytes waiting in mailboxes now. */
  readonly queuedBytes: number;
}

export function createMemoryGuard(options: MemoryGuardOptions): MemoryGuard {
  const heap = options.heap ?? v8HeapGauge;
  const { maxQueuedBytes, pressureRatio } = options;
  const heapCeiling = heap.limit() * pressureRatio;
  let queuedBytes = 0;
  let bytesSinceRead = Infinity;
  let callsSinceRead = 0;
  let heapFull = false;

  function readHeap(): boolean {
    bytesSinceRead = 0;
    callsSinceRead = 0;
    heapFull = heap.used() > heapCeiling;
    return heapFull;
  }

  return {
    admit(bytes) {
      if (queuedBytes + bytes > maxQueuedBytes) return 'memory_pressure';
      bytesSinceRead += bytes;
      callsSinceRead += 1;
      // Under pressure every admission reads again, so the first one after a collection succeeds.
      if (heapFull || bytesSinceRead >= HEAP_READ_EVERY_BYTES || callsSinceRead >= HEAP_READ_EVERY_CALLS) readHeap();
      return heapFull ? 'memory_pressure' : null;
    },
    pressured: readHeap,
    queued(bytes) {
      queuedBytes += bytes;
    },
    released(bytes) {
      queuedBytes -= bytes;
    },
    get queuedBytes() {
      return queuedBytes;
    },
  };
}
