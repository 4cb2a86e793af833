/**
 * Messages between the executor pool (main thread) and an executor worker.
 *
 * The pool keeps at most `MAX_BATCHES_IN_FLIGHT` batches per worker; the
 * worker runs a batch's items in order and answers them in order with
 * `results` messages (several when a batch runs long, the last with
 * `done: true`). So a postMessage round trip is paid per batch, not per
 * message, and answers need no ids: item i of a batch is answered at i.
 *
 * Executions, the bulk of the traffic, travel as columns (typed arrays,
 * transferred) rather than one object each: cloning objects was the main
 * thread's largest cost. Instantiate, snapshot and release travel as objects
 * beside them. A `WebAssembly.Module` crosses by clone (the compiled code is
 * shared, not recompiled), at most once per worker and module thanks to the
 * worker's cache keyed by sha256.
 */
import type { ExecutionFailure, ExecutionResult, InstanceSnapshot, OutputLimits } from './types.js';

export const WASM_PAGE_BYTES = 65_536;

/** Two, so a worker starts the next batch while the main thread settles the last one. */
export const MAX_BATCHES_IN_FLIGHT = 2;

/** `workerData` of an executor worker. */
export interface WorkerInit {
  /** The worker's watchdog slot (see watchdog.ts). */
  slot: SharedArrayBuffer;
  outputLimits: OutputLimits;
  /** Fuel set before every `handle` call. */
  executionFuel: bigint;
  /** Fuel set before `_initialize`/`_start`. */
  startupFuel: bigint;
}

/** Requests name an instance by `agent`, a number the pool gives each instantiation. */
export interface InstantiateRequest {
  op: 'instantiate';
  agent: number;
  sha256: string;
  /** Null when this worker already holds the module in its cache. */
  module: WebAssembly.Module | null;
  globalExports: string[];
  startExport: '_initialize' | '_start' | null;
  memoryLimitPages: number;
  snapshot: InstanceSnapshot | null;
}

export interface SnapshotRequest {
  op: 'snapshot';
  agent: number;
}

export interface ReleaseRequest {
  op: 'release';
  agent: number;
  /** Module to evict from the worker's cache: the released instance was its last user there. */
  dropModule: string | null;
}

/** Every request but an execution. */
export type WorkerRequest = InstantiateRequest | SnapshotRequest | ReleaseRequest;

/** Int32 cells per item of `BatchMessage.executions`. */
export const EXECUTION_CELLS = 3;

/** An execution as the pool queues it: `input` goes to the instance numbered `agent`. */
export interface ExecutionItem {
  op: 'execute';
  agent: number;
  input: Uint8Array;
}

export interface BatchMessage {
  kind: 'batch';
  batch: number;
  count: number;
  /**
   * Pages the instances may grow by, together, while this batch runs: a grant
   * of the pool's memory headroom (see memory-ledger.ts).
   */
  growthPages: number;
  /** Item i, when it is an execution: agent, input start, input end at [3i, 3i + 3). */
  executions: Int32Array;
  /** The inputs of the executions, back to back. */
  inputs: Uint8Array;
  /** The other items, as [index, request], in index order. */
  others: Array<[number, WorkerRequest]>;
}

export type InstantiateResult =
  | { op: 'instantiate'; ok: true; memoryBytes: number; log: string[]; durationNs: number }
  | { op: 'instantiate'; ok: false; failure: ExecutionFailure; message: string };

export type SnapshotResult = { op: 'snapshot'; ok: true; snapshot: InstanceSnapshot } | { op: 'snapshot'; ok: false; message: string };

export interface ReleaseResult {
  op: 'release';
}

export type WorkerResult = InstantiateResult | SnapshotResult | ReleaseResult;

/** `ResultsMessage.status` of an item. */
export const EXECUTED = 0;
export const EXECUTION_FAILED = 1;
export const OTHER = 2;

/** Answers to items [from, from + count) of a batch; columns are indexed from 0 = item `from`. */
export interface ResultsMessage {
  kind: 'results';
  batch: number;
  from: number;
  count: number;
  done: boolean;
  status: Uint8Array;
  fuelUsed: BigInt64Array;
  durationNs: Float64Array;
  memoryBytes: Float64Array;
  /** Executions that wrote anything: [item index, stdout lines, stderr lines], in index order. */
  output: Array<[number, string[], string[]]>;
  /** Failed executions: [item index, failure, message], in index order. */
  failures: Array<[number, ExecutionFailure, string]>;
  /** Answers to the other items: [item index, result], in index order. */
  others: Array<[number, WorkerResult]>;
}

export interface ReadyMessage {
  kind: 'ready';
}

export type WorkerMessage = ReadyMessage | ResultsMessage;

/** The worker's side of `ResultsMessage`: fills one batch's answer columns item by item and cuts them into messages. */
export class AnswerWriter {
  private readonly status: Uint8Array;
  private readonly fuelUsed: BigInt64Array;
  private readonly durationNs: Float64Array;
  private readonly memoryBytes: Float64Array;
  private output: ResultsMessage['output'] = [];
  private failures: ResultsMessage['failures'] = [];
  private others: ResultsMessage['others'] = [];
  /** Buffers to transfer with the next message (snapshot memories). */
  readonly transfer: ArrayBuffer[] = [];
  private from = 0;

  constructor(private readonly batch: number, count: number) {
    this.status = new Uint8Array(count);
    this.fuelUsed = new BigInt64Array(count);
    this.durationNs = new Float64Array(count);
    this.memoryBytes = new Float64Array(count);
  }

  execution(index: number, run: { fuelUsed: bigint; durationNs: number; stdout: string[]; stderr: string[] }): void {
    this.status[index] = EXECUTED;
    this.fuelUsed[index] = run.fuelUsed;
    this.durationNs[index] = run.durationNs;
    if (run.stdout.length > 0 || run.stderr.length > 0) this.output.push([index, run.stdout, run.stderr]);
  }

  /** Completes `execution`: the instance's memory after a success, or why it failed. */
  outcome(index: number, outcome: { memoryBytes: number } | { failure: ExecutionFailure; message: string }): void {
    if ('memoryBytes' in outcome) this.memoryBytes[index] = outcome.memoryBytes;
    else {
      this.status[index] = EXECUTION_FAILED;
      this.failures.push([index, outcome.failure, outcome.message]);
    }
  }

  other(index: number, result: WorkerResult): void {
    this.status[index] = OTHER;
    this.others.push([index, result]);
  }

  /** The message answering items [from, to); the next one starts at `to`. */
  take(to: number, done: boolean): { message: ResultsMessage; transfer: ArrayBuffer[] } {
    const range = [this.from, to] as const;
    const message: ResultsMessage = {
      kind: 'results',
      batch: this.batch,
      from: this.from,
      count: to - this.from,
      done,
      status: this.status.slice(...range),
      fuelUsed: this.fuelUsed.slice(...range),
      durationNs: this.durationNs.slice(...range),
      memoryBytes: this.memoryBytes.slice(...range),
      output: this.output,
      failures: this.failures,
      others: this.others,
    };
    const columns = [message.status, message.fuelUsed, message.durationNs, message.memoryBytes].map((c) => c.buffer as ArrayBuffer);
    const transfer = [...columns, ...this.transfer.splice(0)];
    this.from = to;
    this.output = [];
    this.failures = [];
    this.others = [];
    return { message, transfer };
  }
}

/** The pool's side of `ResultsMessage`: hands each answered item back, in order. */
export function readAnswers(
  message: ResultsMessage,
  onExecution: (index: number, result: ExecutionResult) => void,
  onOther: (index: number, result: WorkerResult) => void,
): void {
  let output = 0;
  let failure = 0;
  let other = 0;
  for (let j = 0; j < message.count; j++) {
    const index = message.from + j;
    if (message.status[j] === OTHER) {
      onOther(index, message.others[other++]![1]);
      continue;
    }
    const lines = message.output[output]?.[0] === index ? message.output[output++] : undefined;
    const run = { stdout: lines?.[1] ?? [], stderr: lines?.[2] ?? [], fuelUsed: message.fuelUsed[j]!, durationNs: message.durationNs[j]! };
    if (message.status[j] === EXECUTED) onExecution(index, { ok: true, ...run, memoryBytes: message.memoryBytes[j]! });
    else {
      const [, reason, text] = message.failures[failure++]!;
      onExecution(index, { ok: false, failure: reason, message: text, ...run, memoryBytes: 0 });
    }
  }
}

/** The pool's side of `BatchMessage`: executions into columns, the rest as objects. */
export function writeBatch(batch: number, growthPages: number, items: ReadonlyArray<ExecutionItem | WorkerRequest>): { message: BatchMessage; transfer: ArrayBuffer[] } {
  let bytes = 0;
  for (const item of items) if (item.op === 'execute') bytes += item.input.length;
  const inputs = new Uint8Array(bytes);
  const executions = new Int32Array(items.length * EXECUTION_CELLS);
  const others: Array<[number, WorkerRequest]> = [];
  let offset = 0;
  items.forEach((item, i) => {
    if (item.op !== 'execute') return void others.push([i, item]);
    executions[i * EXECUTION_CELLS] = item.agent;
    executions[i * EXECUTION_CELLS + 1] = offset;
    inputs.set(item.input, offset);
    offset += item.input.length;
    executions[i * EXECUTION_CELLS + 2] = offset;
  });
  const message: BatchMessage = { kind: 'batch', batch, count: items.length, growthPages, executions, inputs, others };
  return { message, transfer: [inputs.buffer, executions.buffer] };
}
