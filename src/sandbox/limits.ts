import type { Config } from '../config/schema.js';
import type { ExecutorPoolOptions, OutputLimits, SandboxLimits } from './types.js';

/** Admission limits from the `runtime` section. */
export function sandboxLimitsFrom(runtime: Config['runtime']): SandboxLimits {
  return {
    maxModuleSize: runtime.max_module_size,
    maxMemoryPages: runtime.max_memory_pages,
    lowerMemoryMaximum: runtime.lower_memory_maximum,
    fuelPerExecution: BigInt(runtime.fuel_per_execution),
  };
}

/** Per-execution output caps: `max_disk_io_bytes` bounds everything an agent writes in one execution. */
export function outputLimitsFrom(runtime: Config['runtime']): OutputLimits {
  return {
    maxOutputBytes: runtime.max_disk_io_bytes,
    maxOutputMessages: runtime.max_output_messages,
    maxLogBytes: runtime.max_disk_io_bytes,
  };
}

/**
 * Fuel a millisecond of execution burns, at most: a spinning loop burned
 * 10^10 fuel in 6.5 s in its first run (1.5 M/ms: wasm code starts
 * unoptimized, and a running call is never swapped for optimized code) and
 * in 2.25–2.36 s once optimized (4.2–4.4 M/ms), on this project's 2-core
 * reference machine. The unoptimized rate, so a slice never takes longer than
 * its setting; optimized code gets through it about three times faster.
 */
export const FUEL_PER_MS = 1_500_000;

/** `execution_slice` as fuel; undefined when it is off. */
export function sliceFuelFrom(runtime: Config['runtime']): bigint | undefined {
  return runtime.execution_slice > 0 ? BigInt(Math.ceil(runtime.execution_slice * FUEL_PER_MS)) : undefined;
}

type PoolSettings = 'wasmMemoryLimitBytes' | 'fuelPerExecution' | 'executionTimeoutMs' | 'startupTimeoutMs' | 'outputLimits' | 'stackLimitBytes' | 'isolatedWorkers' | 'sliceFuel';

/** What the `runtime` section says of every executor pool; the caller adds its workers, clock and bounds. */
export function poolOptionsFrom(runtime: Config['runtime']): Pick<ExecutorPoolOptions, PoolSettings> {
  const sliceFuel = sliceFuelFrom(runtime);
  return {
    isolatedWorkers: runtime.isolated_workers,
    ...(sliceFuel === undefined ? {} : { sliceFuel }),
    wasmMemoryLimitBytes: runtime.wasm_memory_total,
    fuelPerExecution: BigInt(runtime.fuel_per_execution),
    executionTimeoutMs: runtime.execution_timeout,
    startupTimeoutMs: runtime.agent_startup_timeout,
    outputLimits: outputLimitsFrom(runtime),
    stackLimitBytes: runtime.wasm_stack_limit,
  };
}
