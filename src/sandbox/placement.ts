/**
 * Where a new instance goes: the executor pool's worker places, and the rule
 * that picks one. Least loaded by instance count: instances cost a worker
 * memory and a share of its executions, and agents stay where they were
 * placed until they are released, so counts are what placement can balance.
 */
import type { Thread } from './executor-threads.js';
import type { ModuleCache } from './module-cache.js';
import type { PooledInstance } from './pool-instance.js';
import type { WorkerBatches } from './worker-batches.js';

/** Which of the pool's lanes a worker serves (lanes.ts). */
export type Lane = 'shared' | 'isolated';

/** One of the pool's `workers` places; its thread is replaced when lost, its id stays. */
export interface WorkerSlot {
  readonly id: number;
  readonly lane: Lane;
  thread: Thread;
  /** Its thread died before it ever started; no calls go there any more. */
  broken: boolean;
  /** The instances it hosts. */
  readonly instances: Set<PooledInstance>;
  readonly modules: ModuleCache;
  readonly batches: WorkerBatches;
}

/** The working place with the fewest instances, the lowest id on a tie; undefined when every place is broken. */
export function leastLoaded(slots: readonly WorkerSlot[]): WorkerSlot | undefined {
  let best: WorkerSlot | undefined;
  for (const slot of slots) if (!slot.broken && (best === undefined || slot.instances.size < best.instances.size)) best = slot;
  return best;
}
