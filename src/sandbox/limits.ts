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

/** What the `runtime` section says of every executor pool; the caller adds its workers, clock and bounds. */
export function poolOptionsFrom(runtime: Config['runtime']): Pick<ExecutorPoolOptions, 'wasmMemoryLimitBytes' | 'fuelPerExecution' | 'executionTimeoutMs' | 'startupTimeoutMs' | 'outputLimits' | 'stackLimitBytes'> {
  return {
    wasmMemoryLimitBytes: runtime.wasm_memory_limit,
    fuelPerExecution: BigInt(runtime.fuel_per_execution),
    executionTimeoutMs: runtime.execution_timeout,
    startupTimeoutMs: runtime.agent_startup_timeout,
    outputLimits: outputLimitsFrom(runtime),
    stackLimitBytes: runtime.wasm_stack_limit,
  };
}
