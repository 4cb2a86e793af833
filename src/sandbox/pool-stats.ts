/** The executor pool's `stats()`, read from its parts (executor-pool.ts). */
import type { ThreadSet } from './executor-threads.js';
import type { Lanes } from './lanes.js';
import type { MemoryLedger } from './memory-ledger.js';
import type { ExecutionFailure, ExecutorPoolStats } from './types.js';

export interface PoolCounters {
  modulesSent: number;
  executions: number;
  instantiations: number;
  instantiateNs: number;
  workersLost: number;
  localHops: number;
}

export interface PoolParts {
  lanes: Lanes;
  shared: ThreadSet;
  isolated: ThreadSet;
  ledger: MemoryLedger;
  waiting: number;
  counters: PoolCounters;
  failures: Partial<Record<ExecutionFailure, number>>;
}

export function poolStats({ lanes, shared, isolated, ledger, waiting, counters, failures }: PoolParts): ExecutorPoolStats {
  const { slots } = lanes;
  return {
    workers: slots.length,
    startedWorkers: slots.filter((slot) => slot.thread.ready).length,
    spareWorkers: shared.spareCount() + isolated.spareCount(),
    runaways: lanes.runaways(),
    instances: slots.reduce((n, slot) => n + slot.instances.size, 0),
    waitingInstantiations: waiting,
    pendingCalls: slots.reduce((n, slot) => n + slot.batches.pending(), 0),
    batches: slots.reduce((n, slot) => n + slot.batches.posted, 0),
    modulesSent: counters.modulesSent,
    executions: counters.executions,
    localHops: counters.localHops,
    failures: { ...failures },
    workersLost: counters.workersLost,
    lastRespawnMs: shared.lastRespawnMs() ?? isolated.lastRespawnMs(),
    lastSpawnMs: shared.lastSpawnMs() ?? isolated.lastSpawnMs(),
    meanInstantiateNs: counters.instantiations === 0 ? 0 : counters.instantiateNs / counters.instantiations,
    totalMemoryBytes: ledger.committedBytes(),
    memoryLimitBytes: ledger.limitBytes,
  };
}
