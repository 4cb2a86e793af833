/**
 * Contracts between the parts of the sandbox: admission (validate, instrument,
 * compile) and execution (executor pool, workers, WASI shim). Everything that
 * crosses a worker boundary is plain data.
 */

/** Limits the sandbox reads from the `runtime` configuration section. */
export interface SandboxLimits {
  /** Largest accepted module, bytes (`max_module_size`). */
  maxModuleSize: number;
  /** Largest memory maximum, 64 KiB pages (`max_memory_pages`). */
  maxMemoryPages: number;
  /** Lower a missing or too-large memory maximum instead of rejecting the module. */
  lowerMemoryMaximum: boolean;
  /** Fuel units available to one execution (one `handle` call, or instantiation plus start). */
  fuelPerExecution: bigint;
}

/** Why a module was refused; the value of `metadata.reason` on the INVALID_MODULE / PAYLOAD_TOO_LARGE error. */
export type RejectionReason =
  | 'module_too_large'
  | 'malformed'
  | 'forbidden_import'
  | 'import_signature'
  | 'imported_memory'
  | 'imported_table'
  | 'imported_global'
  | 'forbidden_feature'
  | 'missing_export'
  | 'export_kind'
  | 'reserved_export'
  | 'memory_no_maximum'
  | 'memory_limit'
  | 'invalid_module';

/** What validation learned about an accepted module. */
export interface ModuleInfo {
  /** The WASI calls it imports, as `name` of module `wasi_snapshot_preview1`. */
  imports: string[];
  exports: string[];
  memory: { initialPages: number; maximumPages: number; lowered: boolean };
  /** Indices (in the global index space) of the module's own mutable globals. */
  mutableGlobals: number[];
  /** Name of the export to call once after instantiation, if any. */
  startExport: '_initialize' | '_start' | null;
  /** Whether the module has a wasm start section (runs during instantiation). */
  hasStartSection: boolean;
  functionCount: number;
}

/** Names the instrumenter adds to a module's exports (the `__svc_` prefix is reserved). */
export const FUEL_EXPORT = '__svc_fuel';
export const MEMORY_BUDGET_EXPORT = '__svc_memory_budget';
export const GLOBAL_EXPORT_PREFIX = '__svc_global_';
export const RESERVED_EXPORT_PREFIX = '__svc_';

export interface InstrumentedModule {
  bytes: Uint8Array;
  /** Export names of the mutable globals, in `ModuleInfo.mutableGlobals` order. */
  globalExports: string[];
}

/** A module that passed admission: the unit the executor pool caches and instantiates. */
export interface AdmittedModule {
  sha256: string;
  /** Size of the original module in bytes. */
  size: number;
  info: ModuleInfo;
  /** Compiled from the instrumented bytes; shareable with workers by postMessage. */
  module: WebAssembly.Module;
  globalExports: string[];
}

/** State of an instance kept while it is hibernated or moved: linear memory and mutable globals. */
export interface InstanceSnapshot {
  memory: Uint8Array;
  /** Values of the mutable globals, in `globalExports` order. */
  globals: Array<number | bigint>;
}

/** Why an execution failed. `trap`, `fuel_exhausted`, `timeout` and `worker_lost` are crashes. */
export type ExecutionFailure =
  | 'trap'
  | 'fuel_exhausted'
  | 'timeout'
  | 'worker_lost'
  | 'output_limit'
  | 'memory_limit'
  | 'not_instantiated';

export interface ExecutionOutput {
  /** Lines written to fd 1 (one outgoing message each), without the newline. */
  stdout: string[];
  /** Lines written to fd 2 (log lines). */
  stderr: string[];
  fuelUsed: bigint;
  durationNs: number;
  memoryBytes: number;
}

export type ExecutionResult =
  | ({ ok: true } & ExecutionOutput)
  | ({ ok: false; failure: ExecutionFailure; message: string } & ExecutionOutput);

/** Per-execution caps on what an agent may write. */
export interface OutputLimits {
  maxOutputBytes: number;
  maxOutputMessages: number;
  maxLogBytes: number;
}
