/**
 * An executor worker: hosts many agent instances and runs one item at a
 * time, in batch order. Agent code only ever runs here, never on the main
 * thread (DESIGN.md section 1). Every run is bracketed by the watchdog slot so
 * the pool can terminate this thread when a run overstays its timeout.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { createFdTable, createWasiShim, type FdTable, type WasiOutput } from './wasi.js';
import { restoreSnapshot, takeSnapshot } from './snapshot.js';
import { createLocalDelivery } from './worker-local.js';
import { slotWriter, type SlotKind } from './watchdog.js';
import {
  AnswerWriter,
  EXECUTION_CELLS,
  WASM_PAGE_BYTES,
  type BatchMessage,
  type InstantiateRequest,
  type InstantiateResult,
  type SnapshotResult,
  type WorkerInit,
  type WorkerRequest,
  type WorkerResult,
} from './worker-protocol.js';
import { FUEL_EXPORT, MEMORY_BUDGET_EXPORT, START_EXPORT, UPGRADE_EXPORT, type ExecutionFailure } from './types.js';

/** Answers of a long batch are posted at least this often, so a slow item does not hold back those before it. */
const RESULT_FLUSH_MS = 2;
const EMPTY = new Uint8Array(0);

interface Instance {
  exports: WebAssembly.Exports;
  memory: WebAssembly.Memory;
  handle: () => unknown;
  fuel: WebAssembly.Global;
  budget: WebAssembly.Global;
  fds: FdTable;
  limitPages: number;
  globalExports: string[];
}

/** Where the current item runs: for the watchdog slot. */
interface Item {
  batch: number;
  index: number;
  agent: number;
}

if (parentPort === null) throw new Error('executor-worker must run in a worker thread');
const port = parentPort;
const init = workerData as WorkerInit;
const shim = createWasiShim(init.outputLimits);
const slot = slotWriter(init.slot);
const modules = new Map<string, WebAssembly.Module>();
const instances = new Map<number, Instance>();
const local = createLocalDelivery();
const alive = (agent: number): boolean => instances.has(agent);
/** Pages all instances may still grow by in the current batch (the pool's grant). */
let growthLeft = 0;

function pages(memory: WebAssembly.Memory): number {
  return memory.buffer.byteLength / WASM_PAGE_BYTES;
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/** Runs agent code under the watchdog; returns the thrown value, if any, and the wall time. */
function guarded(kind: SlotKind, item: Item, run: () => unknown): { threw: boolean; error: unknown; durationNs: number } {
  slot.begin(kind, item.batch, item.index, item.agent);
  const t0 = process.hrtime.bigint();
  try {
    run();
    return { threw: false, error: undefined, durationNs: Number(process.hrtime.bigint() - t0) };
  } catch (error) {
    return { threw: true, error, durationNs: Number(process.hrtime.bigint() - t0) };
  } finally {
    slot.end();
  }
}

function classify(threw: boolean, error: unknown, wasi: WasiOutput, fuelLeft: bigint): { failure: ExecutionFailure; message: string } | null {
  if (wasi.failure !== null) return { failure: wasi.failure, message: wasi.message };
  if (!threw) return null;
  if (fuelLeft < 0n) return { failure: 'fuel_exhausted', message: 'fuel exhausted' };
  return { failure: 'trap', message: describe(error) };
}

function setBudget(inst: Instance, currentPages: number): void {
  inst.budget.value = Math.max(0, Math.min(inst.limitPages - currentPages, growthLeft));
}

function exported<T>(exports: WebAssembly.Exports, name: string, kind: abstract new (...args: never[]) => T): T {
  const value = exports[name];
  if (!(value instanceof kind)) throw new Error(`module does not export ${name} as expected`);
  return value;
}

function bind(instance: WebAssembly.Instance, req: InstantiateRequest, fds: FdTable): Instance {
  const exports = instance.exports;
  const handle = exports['handle'];
  if (typeof handle !== 'function') throw new Error('module does not export handle');
  return {
    exports,
    memory: exported(exports, 'memory', WebAssembly.Memory),
    handle: handle as () => unknown,
    fuel: exported(exports, FUEL_EXPORT, WebAssembly.Global),
    budget: exported(exports, MEMORY_BUDGET_EXPORT, WebAssembly.Global),
    fds,
    limitPages: req.memoryLimitPages,
    globalExports: req.globalExports,
  };
}

function instantiate(req: InstantiateRequest, item: Item): InstantiateResult {
  if (req.module !== null) modules.set(req.sha256, req.module);
  const module = modules.get(req.sha256);
  if (module === undefined) return { op: 'instantiate', ok: false, failure: 'not_instantiated', message: 'module not in this worker' };
  const fds = createFdTable();
  // Filled inside the guarded run; a holder because control flow does not follow assignments in callbacks.
  const bound: { inst?: Instance; baseline: number } = { baseline: 0 };
  // Memory stays unknown to the shim while a wasm start section runs: its exports do not exist yet.
  shim.begin(null, fds, EMPTY);
  const run = guarded('start', item, () => {
    const instance = new WebAssembly.Instance(module, shim.imports);
    const inst = bind(instance, req, fds);
    bound.inst = inst;
    shim.attachMemory(inst.memory);
    inst.fuel.value = init.startupFuel;
    if (req.snapshot !== null) restoreSnapshot(instance.exports, req.globalExports, req.snapshot, req.upgrade ?? undefined);
    bound.baseline = pages(inst.memory);
    setBudget(inst, bound.baseline);
    // A restored instance has its state from the snapshot: its start functions ran in an earlier life.
    if (req.snapshot !== null) {
      const migrate = req.upgrade === null ? undefined : instance.exports[UPGRADE_EXPORT];
      if (typeof migrate === 'function') migrate();
      return;
    }
    const section = instance.exports[START_EXPORT];
    if (typeof section === 'function') section();
    const start = req.startExport === null ? undefined : instance.exports[req.startExport];
    if (typeof start === 'function') start();
  });
  const wasi = shim.end();
  const inst = bound.inst;
  let failed = classify(run.threw, run.error, wasi, inst === undefined ? 0n : (inst.fuel.value as bigint));
  // Only a wasm start section left in place can get here (a module not instrumented by admission): it runs before
  // the host can set the budget global.
  if (failed === null && inst !== undefined && pages(inst.memory) > req.memoryLimitPages) {
    failed = { failure: 'memory_limit', message: `start section grew memory past ${req.memoryLimitPages} pages` };
  }
  if (inst === undefined || failed !== null) {
    const { failure, message } = failed ?? { failure: 'trap' as const, message: describe(run.error) };
    return { op: 'instantiate', ok: false, failure, message };
  }
  growthLeft -= pages(inst.memory) - bound.baseline;
  instances.set(req.agent, inst);
  local.name(req.agent, req.names);
  return { op: 'instantiate', ok: true, memoryBytes: inst.memory.buffer.byteLength, log: wasi.stderr, durationNs: run.durationNs };
}

function snapshot(agent: number, transfer: ArrayBuffer[]): SnapshotResult {
  const inst = instances.get(agent);
  if (inst === undefined) return { op: 'snapshot', ok: false, message: 'agent has no instance' };
  const taken = takeSnapshot(inst.exports, inst.globalExports);
  transfer.push(taken.memory.buffer as ArrayBuffer);
  return { op: 'snapshot', ok: true, snapshot: taken };
}

function runOther(req: WorkerRequest, item: Item, transfer: ArrayBuffer[]): WorkerResult {
  switch (req.op) {
    case 'instantiate':
      return instantiate(req, item);
    case 'snapshot':
      return snapshot(req.agent, transfer);
    case 'release':
      instances.delete(req.agent);
      local.forget(req.agent);
      if (req.dropModule !== null) modules.delete(req.dropModule);
      return { op: 'release' };
  }
}

const NO_OUTPUT: string[] = [];

/** Runs one execution and answers it; returns its stdout lines. */
function execute(answers: AnswerWriter, item: Item, input: Uint8Array): string[] {
  const inst = instances.get(item.agent);
  if (inst === undefined) {
    answers.execution(item.index, { fuelUsed: 0n, durationNs: 0, stdout: [], stderr: [] });
    answers.outcome(item.index, { failure: 'not_instantiated', message: 'agent has no instance (crashed, released or lost)' });
    return NO_OUTPUT;
  }
  const before = pages(inst.memory);
  inst.fuel.value = init.executionFuel;
  setBudget(inst, before);
  shim.begin(inst.memory, inst.fds, input);
  const run = guarded('execute', item, inst.handle);
  const wasi = shim.end();
  const fuelLeft = inst.fuel.value as bigint;
  const after = pages(inst.memory);
  growthLeft -= after - before;
  answers.execution(item.index, { fuelUsed: init.executionFuel - fuelLeft, durationNs: run.durationNs, stdout: wasi.stdout, stderr: wasi.stderr });
  const failed = classify(run.threw, run.error, wasi, fuelLeft);
  if (failed === null) {
    answers.outcome(item.index, { memoryBytes: after * WASM_PAGE_BYTES });
    return wasi.stdout;
  }
  // The agent stopped mid-way: its state may be inconsistent, so the instance is gone (its supervisor restarts it).
  instances.delete(item.agent);
  answers.outcome(item.index, failed);
  return NO_OUTPUT;
}

function post(answers: AnswerWriter, to: number, done: boolean): void {
  const { message, transfer } = answers.take(to, done);
  port.postMessage(message, transfer);
}

/** The instances of a batch's execution items, in order. */
function* executionAgents(msg: BatchMessage): Generator<number> {
  let nextOther = 0;
  for (let i = 0; i < msg.count; i++) {
    if (msg.others[nextOther]?.[0] === i) nextOther += 1;
    else yield msg.executions[i * EXECUTION_CELLS]!;
  }
}

/** Runs a batch's items in order, then the hops they led to (worker-local.ts), answering as it goes. */
function runBatch(msg: BatchMessage): void {
  growthLeft = msg.growthPages;
  const hopsAllowed = msg.loan?.hops ?? 0;
  const answers = new AnswerWriter(msg.batch, msg.count + hopsAllowed);
  local.begin(msg.loan, executionAgents(msg));
  const item: Item = { batch: msg.batch, index: 0, agent: 0 };
  let nextOther = 0;
  let lastPost = performance.now();
  let end = msg.count;
  for (let i = 0; i < end; i++) {
    item.index = i;
    const other = msg.others[nextOther];
    if (i < msg.count && other !== undefined && other[0] === i) {
      nextOther += 1;
      item.agent = other[1].agent;
      answers.other(i, runOther(other[1], item, answers.transfer));
    } else if (i < msg.count) {
      const at = i * EXECUTION_CELLS;
      item.agent = msg.executions[at]!;
      const input = msg.inputs.subarray(msg.executions[at + 1], msg.executions[at + 2]);
      const stdout = execute(answers, item, input);
      if (msg.loan !== null) answers.sent(local.route(i, item.agent, input, stdout, alive));
    } else {
      const hop = local.nextHop()!;
      item.agent = hop.agent;
      const stdout = execute(answers, item, hop.input);
      local.ran(hop.agent, !alive(hop.agent));
      answers.sent(local.route(i, hop.agent, hop.message, stdout, alive));
    }
    if (msg.loan !== null) end = msg.count + answers.hops;
    if (i < end - 1 && performance.now() - lastPost > RESULT_FLUSH_MS) {
      post(answers, i + 1, false);
      lastPost = performance.now();
    }
  }
  post(answers, end, true);
}

port.on('message', (msg: BatchMessage) => runBatch(msg));
port.postMessage({ kind: 'ready' });
