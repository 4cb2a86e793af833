/**
 * Shared by the sandbox tests: a pool with test-sized limits, and
 * `handAdmitted`, which builds an `AdmittedModule` from a hand-written WAT
 * fixture that exports the instrumenter's globals itself (`__svc_fuel`,
 * `__svc_memory_budget`, `__svc_global_<i>`): the executor pool's contract
 * with instrumented modules, tested without going through admission.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { wat, watFixture } from '../helpers/wat.js';
import { createAdmission, type Admission } from '../../src/sandbox/admission.js';
import { createSimulatedClock, type SimulatedClock } from '../../supervisors/index.js';
import { createExecutorPool, type ExecutorPool, type ExecutorPoolOptions } from '../../src/sandbox/executor-pool.js';
import { WATCHDOG_PERIOD_MS } from '../../src/sandbox/watchdog.js';
import { GLOBAL_EXPORT_PREFIX, type AdmittedModule, type ExecutionResult, type InstanceHandle, type InstantiateOptions } from '../../src/sandbox/types.js';

export interface HandAdmitOptions {
  initialPages?: number;
  maximumPages?: number;
  hasStartSection?: boolean;
}

export async function handAdmitted(file: string, opts: HandAdmitOptions = {}): Promise<AdmittedModule> {
  return handAdmittedBytes(await watFixture(file), opts);
}

/** `handAdmitted` for WAT written in the test itself. */
export async function handAdmittedWat(source: string, opts: HandAdmitOptions = {}): Promise<AdmittedModule> {
  return handAdmittedBytes(await wat(source), opts);
}

function handAdmittedBytes(bytes: Uint8Array<ArrayBuffer>, opts: HandAdmitOptions): AdmittedModule {
  const module = new WebAssembly.Module(new Uint8Array(bytes));
  const exports = WebAssembly.Module.exports(module).map((e) => e.name);
  const imports = WebAssembly.Module.imports(module).map((i) => i.name);
  const globalExports = exports.filter((name) => name.startsWith(GLOBAL_EXPORT_PREFIX));
  const startExport = exports.includes('_initialize') ? '_initialize' : exports.includes('_start') ? '_start' : null;
  return {
    sha256: createHash('sha256').update(bytes).digest('hex'),
    size: bytes.length,
    module,
    globalExports,
    info: {
      imports,
      exports,
      memory: { initialPages: opts.initialPages ?? 1, maximumPages: opts.maximumPages ?? 1, lowered: false },
      mutableGlobals: globalExports.map((name) => Number(name.slice(GLOBAL_EXPORT_PREFIX.length))),
      // Read only by updates keeping state, which go through admission (`admitted`), never through these.
      mutableGlobalTypes: [],
      dataSegments: [],
      hasUpgrade: exports.includes('_upgrade'),
      startExport,
      hasStartSection: opts.hasStartSection ?? false,
      functionCount: 0,
    },
  };
}

let admission: Admission | undefined;

/** Admits a WAT fixture through the real pipeline (validate, instrument, compile). */
export async function admitted(file: string): Promise<AdmittedModule> {
  admission ??= createAdmission({ maxModuleSize: 1 << 20, maxMemoryPages: 1024, lowerMemoryMaximum: false, fuelPerExecution: 10_000_000n });
  return admission.admit(await watFixture(file));
}

export const MiB = 1024 * 1024;
export const PAGE = 65_536;

/**
 * A two-worker pool with test-sized limits and no warm spare (a thread that
 * boots for nothing costs each test); every test closes the pool it makes.
 * Its watchdog runs on a simulated clock (its own unless given one): time
 * moves only when a test moves it (`driveUntil`), so no run is stopped by the
 * watchdog in a test that does not ask for it.
 */
export function testPool(overrides: Partial<ExecutorPoolOptions> = {}): ExecutorPool {
  return createExecutorPool({
    workers: 2,
    wasmMemoryLimitBytes: 64 * MiB,
    fuelPerExecution: 10_000_000n,
    executionTimeoutMs: 2_000,
    startupTimeoutMs: 2_000,
    outputLimits: { maxOutputBytes: 64 * 1024, maxOutputMessages: 100, maxLogBytes: 64 * 1024 },
    spareWorkers: 0,
    clock: createSimulatedClock(),
    ...overrides,
  });
}

/** `execute` as a promise: its one result, a refusal included. */
export function run(pool: ExecutorPool, instance: InstanceHandle, input: Uint8Array = new Uint8Array()): Promise<ExecutionResult> {
  return new Promise((resolve) => pool.execute(instance, input, resolve));
}

/** Instantiates `admitted` labelled `label`; resolves with its handle. */
export async function place(pool: ExecutorPool, label: string, admitted: AdmittedModule, options: Omit<InstantiateOptions, 'label'> = { memoryLimitBytes: MiB }): Promise<InstanceHandle> {
  return (await pool.instantiate(admitted, { label, ...options })).instance;
}

/** Longest a watchdog test drives the clock: far past any timeout the tests set. */
const MAX_DRIVE_MS = 600_000;

/**
 * Moves `clock` forward one watchdog period at a time until `settled` is; the
 * watchdog times runs on it from when it first sees them. Resolves with the
 * value and how far the clock moved. Bounded by `MAX_DRIVE_MS` of clock time.
 */
export async function driveUntil<T>(clock: SimulatedClock, settled: Promise<T>): Promise<{ value: T; drivenMs: number }> {
  let done = false;
  const value = settled.finally(() => (done = true));
  const from = clock.now();
  while (!done) {
    if (clock.now() - from > MAX_DRIVE_MS) throw new Error(`still pending after ${MAX_DRIVE_MS} ms of clock time`);
    await clock.advance(WATCHDOG_PERIOD_MS);
  }
  return { value: await value, drivenMs: clock.now() - from };
}

export function assertOk(result: ExecutionResult): asserts result is Extract<ExecutionResult, { ok: true }> {
  assert.equal(result.ok, true, result.ok ? '' : `${result.failure}: ${result.message}`);
}

export function failureOf(result: ExecutionResult): string | null {
  return result.ok ? null : result.failure;
}
