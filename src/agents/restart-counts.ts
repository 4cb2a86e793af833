/**
 * Restart counts are stored (they survive a server restart, and `restart_count`
 * reads them) but off the restart path: a restart marks the agent, and one
 * pass per turn of the event loop writes every marked agent's count. A burst
 * of restarts (a lost worker takes its agents along) costs one short pass,
 * not a synchronous SQLite write inside each restart.
 */
import { isStoreError } from '../store/store-error.js';
import type { Store } from '../store/types.js';
import type { Logger } from '../telemetry/logger.js';
import type { AgentRuntime } from './agent-runtime.js';

export interface RestartCounts {
  /** Counts one restart of `agent` and schedules the write. */
  count(agent: AgentRuntime): void;
  /** Writes what is pending now (shutdown, before the store closes). */
  flush(): void;
}

export function createRestartCounts(store: Store, log: Logger): RestartCounts {
  const dirty = new Set<AgentRuntime>();
  let scheduled = false;

  function flush(): void {
    scheduled = false;
    for (const agent of dirty) {
      try {
        store.updateAgent(agent.id, { restartCount: agent.record.restartCount, updatedAt: agent.record.updatedAt });
      } catch (error) {
        // Undeployed meanwhile: nothing left to update.
        if (!isStoreError(error, 'not_found')) log.error({ agent_id: agent.id, err: error }, 'could not store the restart count');
      }
    }
    dirty.clear();
  }

  return {
    count(agent) {
      agent.record.restartCount += 1;
      agent.record.updatedAt = Date.now();
      dirty.add(agent);
      if (scheduled) return;
      scheduled = true;
      setImmediate(flush);
    },
    flush,
  };
}
