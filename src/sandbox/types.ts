/**
 * Contracts between the parts of the sandbox: admission (validate, instrument,
 * compile) and execution (executor pool, workers, WASI shim). Everything that
 * crosses a worker boundary is plain data.
 */
import type { Clock } from '../../supervisors/index.js';

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
  | 'agent_memory_limit'
  | 'invalid_module';

export type ValueTypeName = 'i32' | 'i64' | 'f32' | 'f64';

/** What validation learned about an accepted module. */
export interface ModuleInfo {
  /** The WASI calls it imports, as `name` of module `wasi_snapshot_preview1`. */
  imports: string[];
  exports: string[];
  memory: { initialPages: number; maximumPages: number; lowered: boolean };
  /** Indices (in the global index space) of the module's own mutable globals. */
  mutableGlobals: number[];
  /** Their value types (`i32`, `i64`, `f32`, `f64`), in the same order: what an update keeping state must match. */
  mutableGlobalTypes: ValueTypeName[];
  /** Name of the export to call once after instantiation, if any. */
  startExport: '_initialize' | '_start' | null;
  /** Where its active data segments write: an update keeping state writes them again over the restored memory. */
  dataSegments: Array<{ offset: number; length: number }>;
  /** Whether it exports `_upgrade`, run after an update restored the previous version's state. */
  hasUpgrade: boolean;
  /** Whether the module has a wasm start section; instrumentation turns it into the `__svc_start` export. */
  hasStartSection: boolean;
  functionCount: number;
}

/** Names the instrumenter adds to a module's exports (the `__svc_` prefix is reserved). */
export const FUEL_EXPORT = '__svc_fuel';
export const MEMORY_BUDGET_EXPORT = '__svc_memory_budget';
/** The function of the original module's start section, run first at startup (see instrument.ts). */
export const START_EXPORT = '__svc_start';
/** The optional export an update keeping state calls once the previous version's state is in (docs/agent-abi.md). */
export const UPGRADE_EXPORT = '_upgrade';
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

/**
 * Why an execution failed. The instance is gone after any of them but
 * `overloaded` and `closed`, which are refusals: the pool did not run the call.
 */
export type ExecutionFailure =
  | 'trap'
  | 'fuel_exhausted'
  | 'timeout'
  | 'worker_lost'
  | 'output_limit'
  | 'memory_limit'
  | 'not_instantiated'
  /** Refused: `maxPendingExecutions` calls were queued or running. */
  | 'overloaded'
  /** Refused: the pool is closed. */
  | 'closed';

export interface ExecutionOutput {
  /** Lines written to fd 1 (one outgoing message each), without the newline. */
  stdout: string[];
  /** Lines written to fd 2 (log lines). */
  stderr: string[];
  fuelUsed: bigint;
  durationNs: number;
  memoryBytes: number;
  /** Lines delivered inside the worker (worker-local delivery), in order: [stdout line, the message as delivered, JSON]. */
  local?: ReadonlyArray<readonly [line: number, json: string]>;
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

/* The executor pool's API (implemented by `createExecutorPool` in executor-pool.ts, which documents its behaviour). */

export interface ExecutorPoolOptions {
  /** Worker threads; default `os.availableParallelism()`. */
  workers?: number;
  /** Idle workers kept warm to replace a lost one at once (spawning one takes 30–150 ms). Default 1. */
  spareWorkers?: number;
  /** Workers of the isolated lane, where runaway agents go (lanes.ts); default 0: no lanes, no slice. */
  isolatedWorkers?: number;
  /** Fuel of one execution on the shared lane (`execution_slice`); only with isolated workers. */
  sliceFuel?: bigint;
  /** Linear memory of all instances together (`wasm_memory_total`). */
  wasmMemoryLimitBytes: number;
  /** Fuel of one execution (`fuel_per_execution`). */
  fuelPerExecution: bigint;
  /** Fuel of instantiation plus start; default `fuelPerExecution`. */
  startupFuel?: bigint;
  executionTimeoutMs: number;
  startupTimeoutMs: number;
  outputLimits: OutputLimits;
  /** Native stack of each worker (`wasm_stack_limit`), which bounds agent recursion. */
  stackLimitBytes?: number;
  maxBatchSize?: number;
  /** Executions queued or running at once (`max_concurrent_executions`); past it `execute` answers `overloaded`. */
  maxPendingExecutions?: number;
  /** The watchdog's time: default the process clock; tests pass a simulated one. */
  clock?: Clock;
  /** How often the watchdog reads the workers' slots (default 10 ms). */
  watchdogPeriodMs?: number;
}

/** One instance in the pool, as `instantiate` placed it: callers hold it and hand it back, and only the pool looks inside. */
export interface InstanceHandle {
  /** Whom it is for (`InstantiateOptions.label`). */
  readonly label: string;
}

export interface InstantiateOptions {
  /** Names the instance in errors (`agent_id`) and in `workerLost` events: the agent's id. */
  label: string;
  memoryLimitBytes: number;
  snapshot?: InstanceSnapshot;
  /**
   * The snapshot is another module's (an update keeping state): it may be
   * smaller than this module's initial memory, and `_upgrade` runs after it
   * is restored.
   */
  upgrade?: boolean;
  /**
   * Called when the instance died with its worker, which another instance's
   * overrun or the worker's own death took down. The overrunning instance is
   * told by its own call's answer (`timeout`), not here.
   */
  onLost?: (instance: InstanceHandle) => void;
  /** What messages name the instance by, for worker-local delivery: the agent's id and name. Default: `label`. */
  names?: string[];
  /** The shared worker to place it on (beside the agents it talks to); ignored for a runaway or a worker that is gone. */
  workerId?: number;
}

/** Where a live instance runs (`ExecutorPool.placementOf`). */
export interface WorkerPlace {
  readonly workerId: number;
  /** On the shared lane (not the isolated one). */
  readonly shared: boolean;
  /** Instances that worker hosts. */
  readonly instances: number;
}

/**
 * Worker-local delivery, the main thread's side: as a batch leaves for a
 * shared worker, the lender says which instances there may send and take
 * messages inside it (sandbox/worker-local.ts).
 */
export interface Lender {
  /** Hops one batch may append (0 lends nothing), and whether tracing is on. */
  terms(): { readonly hops: number; readonly traced: boolean };
  /**
   * The instances lent to a batch that runs `owners` (each with its label):
   * among those and the agents they talk to, the ones `eligible` accepts
   * (hosted by the batch's worker) and whose agents may take part.
   */
  borrow(owners: ReadonlyArray<readonly [label: string, instance: InstanceHandle]>, eligible: (instance: InstanceHandle) => boolean): Array<[InstanceHandle, Borrower]>;
}

/** An instance lent to a batch, as its agent takes part. */
export interface Borrower {
  /** The result of a hop it ran; the message is the `local` send of an earlier result. */
  readonly onResult: (result: ExecutionResult) => void;
  /** The batch is answered, or lost: the loan is over. */
  returned(): void;
}

export interface Placement {
  instance: InstanceHandle;
  memoryBytes: number;
  workerId: number;
  /** Lines the start function wrote to fd 2. */
  log: string[];
}

export interface WorkerLostEvent {
  workerId: number;
  /** The label of the instance whose run overstayed its timeout, or null when the worker died on its own. */
  overran: string | null;
  /** The labels of the other instances on that worker. */
  lost: string[];
}

export interface ExecutorPoolStats {
  workers: number;
  /** Workers whose thread has started and takes calls. */
  startedWorkers: number;
  spareWorkers: number;
  /** Agents marked runaway (fuel used up or a timeout overrun), which the isolated lane hosts. */
  runaways: number;
  instances: number;
  /** Instantiations waiting for the growth granted to batches in flight to settle. */
  waitingInstantiations: number;
  pendingCalls: number;
  batches: number;
  /** Compiled modules posted to workers (once per worker and module while instances use it there). */
  modulesSent: number;
  executions: number;
  /** Executions of messages delivered inside a worker (worker-local delivery), counted in `executions` too. */
  localHops: number;
  failures: Partial<Record<ExecutionFailure, number>>;
  workersLost: number;
  /** Time from the last worker loss until its replacement was ready (near 0 with a warm spare). */
  lastRespawnMs: number | null;
  /** Time the last spawned worker took to start. */
  lastSpawnMs: number | null;
  /** Mean wall time of instantiation plus start inside the worker. */
  meanInstantiateNs: number;
  totalMemoryBytes: number;
  memoryLimitBytes: number;
}

export interface ExecutorPool {
  /**
   * Resolves once every worker thread has started (or died before starting,
   * which `instantiate` then reports). Calls made before are queued, but time
   * spent waiting here would count against an agent's startup timeout.
   */
  started(): Promise<void>;
  /** Rejects with an `SvcError` (see executor-pool.ts). */
  instantiate(admitted: AdmittedModule, opts: InstantiateOptions): Promise<Placement>;
  /** Runs `handle` once; `onResult` is called once, with the result or the refusal, and never synchronously. */
  execute(instance: InstanceHandle, input: Uint8Array, onResult: (result: ExecutionResult) => void): void;
  snapshot(instance: InstanceHandle): Promise<InstanceSnapshot>;
  /** Resolves once the worker dropped the instance; a no-op for one already gone. */
  release(instance: InstanceHandle): Promise<void>;
  memoryBytes(instance: InstanceHandle): number;
  totalMemoryBytes(): number;
  stats(): ExecutorPoolStats;
  on(event: 'workerLost', listener: (event: WorkerLostEvent) => void): () => void;
  /** Turns worker-local delivery on, with `lender` deciding what takes part. */
  lendWith(lender: Lender): void;
  /** Where the instance runs; undefined once it is gone. */
  placementOf(instance: InstanceHandle): WorkerPlace | undefined;
  close(): Promise<void>;
}
