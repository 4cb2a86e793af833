import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Config } from './config/schema.js';
import { createAdmission, type Admission } from './sandbox/admission.js';
import { createExecutorPool } from './sandbox/executor-pool.js';
import { outputLimitsFrom, sandboxLimitsFrom } from './sandbox/limits.js';
import type { ExecutorPool } from './sandbox/types.js';
import type { Logger } from './telemetry/logger.js';

export interface Server {
  readonly admission: Admission;
  readonly pool: ExecutorPool;
  readonly dataDir: string;
  /** Stops the executor pool; safe to call more than once. */
  stop(): Promise<void>;
}

/**
 * The composition root: builds the services from the configuration. The
 * supervision tree, store and API listeners join here as they are built.
 */
export async function startServer(config: Config, log: Logger, cwd = process.cwd()): Promise<Server> {
  const dataDir = resolve(cwd, config.storage.data_dir);
  mkdirSync(dataDir, { recursive: true });

  const runtime = config.runtime;
  const admission = createAdmission(sandboxLimitsFrom(runtime));
  const pool = createExecutorPool({
    workers: runtime.executor_workers,
    wasmMemoryLimitBytes: runtime.wasm_memory_limit,
    fuelPerExecution: BigInt(runtime.fuel_per_execution),
    executionTimeoutMs: runtime.execution_timeout,
    startupTimeoutMs: runtime.agent_startup_timeout,
    outputLimits: outputLimitsFrom(runtime),
    stackLimitBytes: runtime.wasm_stack_limit,
    maxPendingExecutions: runtime.max_concurrent_executions,
  });
  pool.on('workerLost', (event) => log.warn({ worker_id: event.workerId, overran: event.overran, lost: event.lost }, 'executor worker lost'));

  let stopping: Promise<void> | undefined;
  log.info({ data_dir: dataDir, workers: pool.stats().workers }, 'started');
  return {
    admission,
    pool,
    dataDir,
    stop() {
      stopping ??= pool.close().then(() => log.info('stopped'));
      return stopping;
    },
  };
}
