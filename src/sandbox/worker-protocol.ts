/**
 * Messages between the executor pool (main thread) and an executor worker.
 *
 * The pool keeps at most `MAX_BATCHES_IN_FLIGHT` batches per worker; the
 * worker runs a batch's items in order and answers them in order with
 * `results` messages (several when a batch runs long, the last with
 * `done: true`). So a postMessage round trip is paid per batch, not per
 * message, and answers need no ids: item i of a batch is answered at i.
 *
 * Executions, the bulk of the traffic, travel as columns (typed arrays over
 * one transferred buffer) and their output lines as one string per message,
 * rather than objects and arrays per execution: cloning those was the main
 * thread's largest cost (about 0.4 µs per execution to receive nested arrays
 * of lines, against 0.15 µs for one string split on the main thread).
 * Instantiate, snapshot and release travel as objects beside them. A `WebAssembly.Module` crosses by clone (the compiled code is
 * shared, not recompiled), at most once per worker and module thanks to the
 * worker's cache keyed by sha256.
 */
import type { ExecutionFailure, ExecutionResult, InstanceSnapshot, OutputLimits } from './types.js';

/** A message delivered in the worker: line `line` of item `item`'s stdout went to instance `agent` as `json`. */
export type LocalSend = [item: number, line: number, agent: number, json: string];

export const WASM_PAGE_BYTES = 65_536;

/** Two, so under a full load a worker starts the next batch while the main thread settles the last one (worker-batches.ts). */
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
  /**
   * The snapshot is another module's: restore it (into a larger memory if need be), write this module's
   * data segments (these ranges) over it again, then run `_upgrade`. Null otherwise.
   */
  upgrade: Array<{ offset: number; length: number }> | null;
  /** What messages name the instance's agent by: its id first, then its name (worker-local.ts). */
  names: string[];
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
  /** The inputs of the executions, back to back (in the same buffer as `executions`). */
  inputs: Uint8Array;
  /** The other items, as [index, request], in index order. */
  others: Array<[number, WorkerRequest]>;
  /** Instances lent to the batch for worker-local delivery; null: none. */
  loan: BatchLoan | null;
}

/** What the main thread lends a batch (worker-local.ts). */
export interface BatchLoan {
  /** Instance numbers that may send and take messages inside the batch. */
  agents: Int32Array;
  /** Hops the batch may append at most. */
  hops: number;
  /** Tracing is on: only messages of unsampled traces stay local. */
  traced: boolean;
}

export type InstantiateResult =
  | { op: 'instantiate'; ok: true; memoryBytes: number; log: string[]; durationNs: number }
  | { op: 'instantiate'; ok: false; failure: ExecutionFailure; message: string };

export type SnapshotResult = { op: 'snapshot'; ok: true; snapshot: InstanceSnapshot } | { op: 'snapshot'; ok: false; message: string };

export interface ReleaseResult {
  op: 'release';
}

export type WorkerResult = InstantiateResult | SnapshotResult | ReleaseResult;

/** Status cell of an item in `ResultsMessage.numbers`. */
export const EXECUTED = 0;
export const EXECUTION_FAILED = 1;
export const OTHER = 2;

/** Cells per item of `ResultsMessage.numbers`: status, duration (ns), memory (bytes), stdout lines, stderr lines. */
export const ANSWER_CELLS = 5;
const STATUS = 0;
const DURATION = 1;
const MEMORY = 2;
const STDOUT_LINES = 3;
const STDERR_LINES = 4;

/** Answers to items [from, from + count) of a batch; columns are indexed from 0 = item `from`. */
export interface ResultsMessage {
  kind: 'results';
  batch: number;
  from: number;
  count: number;
  done: boolean;
  fuelUsed: BigInt64Array;
  /** `ANSWER_CELLS` per item, in the same buffer as `fuelUsed`. */
  numbers: Float64Array;
  /** The lines the executions wrote to fd 1, in item order, joined by newlines (no line holds one). */
  stdout: string;
  /** The same for fd 2. */
  stderr: string;
  /** Failed executions: [item index, failure, message], in index order. */
  failures: Array<[number, ExecutionFailure, string]>;
  /** Answers to the other items: [item index, result], in index order. */
  others: Array<[number, WorkerResult]>;
  /**
   * Messages delivered in the worker, in order: [item index, stdout line, instance, message JSON].
   * The nth since the batch began is item `count + n` (a hop), answered later in the same order.
   */
  local: LocalSend[];
}

export interface ReadyMessage {
  kind: 'ready';
}

export type WorkerMessage = ReadyMessage | ResultsMessage;

/** The worker's side of `ResultsMessage`: fills one batch's answer columns item by item and cuts them into messages. */
export class AnswerWriter {
  private readonly columns: ArrayBuffer;
  private readonly fuelUsed: BigInt64Array;
  private readonly numbers: Float64Array;
  private stdout: string[] = [];
  private stderr: string[] = [];
  private failures: ResultsMessage['failures'] = [];
  private others: ResultsMessage['others'] = [];
  private local: LocalSend[] = [];
  /** Messages delivered in the worker since the batch began: the hops appended to it. */
  hops = 0;
  /** Buffers to transfer with the next message (snapshot memories). */
  readonly transfer: ArrayBuffer[] = [];
  private from = 0;

  /** `capacity`: the batch's items and the hops it may append. */
  constructor(private readonly batch: number, capacity: number) {
    this.columns = new ArrayBuffer(capacity * 8 * (1 + ANSWER_CELLS));
    this.fuelUsed = new BigInt64Array(this.columns, 0, capacity);
    this.numbers = new Float64Array(this.columns, capacity * 8, capacity * ANSWER_CELLS);
  }

  /** Messages of the items answered since the last `take` that went to hops. */
  sent(sends: readonly LocalSend[]): void {
    for (const send of sends) this.local.push(send);
    this.hops += sends.length;
  }

  execution(index: number, run: { fuelUsed: bigint; durationNs: number; stdout: string[]; stderr: string[] }): void {
    const at = index * ANSWER_CELLS;
    this.fuelUsed[index] = run.fuelUsed;
    this.numbers[at + STATUS] = EXECUTED;
    this.numbers[at + DURATION] = run.durationNs;
    this.numbers[at + STDOUT_LINES] = run.stdout.length;
    this.numbers[at + STDERR_LINES] = run.stderr.length;
    for (const line of run.stdout) this.stdout.push(line);
    for (const line of run.stderr) this.stderr.push(line);
  }

  /** Completes `execution`: the instance's memory after a success, or why it failed. */
  outcome(index: number, outcome: { memoryBytes: number } | { failure: ExecutionFailure; message: string }): void {
    if ('memoryBytes' in outcome) this.numbers[index * ANSWER_CELLS + MEMORY] = outcome.memoryBytes;
    else {
      this.numbers[index * ANSWER_CELLS + STATUS] = EXECUTION_FAILED;
      this.failures.push([index, outcome.failure, outcome.message]);
    }
  }

  other(index: number, result: WorkerResult): void {
    this.numbers[index * ANSWER_CELLS + STATUS] = OTHER;
    this.others.push([index, result]);
  }

  /** The message answering items [from, to); the next one starts at `to`. */
  take(to: number, done: boolean): { message: ResultsMessage; transfer: ArrayBuffer[] } {
    const n = to - this.from;
    // A batch answered in one message sends its columns as they are (the reader reads `n` items of them); parts of a longer one are copied out.
    const whole = this.from === 0 && done;
    const columns = whole ? this.columns : new ArrayBuffer(n * 8 * (1 + ANSWER_CELLS));
    const fuelUsed = whole ? this.fuelUsed : new BigInt64Array(columns, 0, n);
    const numbers = whole ? this.numbers : new Float64Array(columns, n * 8, n * ANSWER_CELLS);
    if (!whole) {
      fuelUsed.set(this.fuelUsed.subarray(this.from, to));
      numbers.set(this.numbers.subarray(this.from * ANSWER_CELLS, to * ANSWER_CELLS));
    }
    const message: ResultsMessage = {
      kind: 'results',
      batch: this.batch,
      from: this.from,
      count: n,
      done,
      fuelUsed,
      numbers,
      stdout: this.stdout.join('\n'),
      stderr: this.stderr.join('\n'),
      failures: this.failures,
      others: this.others,
      local: this.local,
    };
    const transfer = [columns, ...this.transfer.splice(0)];
    this.from = to;
    this.stdout = [];
    this.stderr = [];
    this.failures = [];
    this.others = [];
    this.local = [];
    return { message, transfer };
  }
}

/** Lines `count` of `lines` from `*at`, moving `*at` past them. */
class LineReader {
  private lines: string[] | undefined;
  private at = 0;

  constructor(private readonly text: string) {}

  take(count: number): string[] {
    if (count === 0) return [];
    // Split once, when the first line is asked for: a message with no output splits nothing.
    this.lines ??= this.text.split('\n');
    this.at += count;
    return this.lines.slice(this.at - count, this.at);
  }
}

/** The pool's side of `ResultsMessage`: hands each answered item back, in order. */
export function readAnswers(
  message: ResultsMessage,
  onExecution: (index: number, result: ExecutionResult) => void,
  onOther: (index: number, result: WorkerResult) => void,
): void {
  const { fuelUsed, numbers } = message;
  const stdout = new LineReader(message.stdout);
  const stderr = new LineReader(message.stderr);
  let failure = 0;
  let other = 0;
  for (let j = 0; j < message.count; j++) {
    const index = message.from + j;
    const at = j * ANSWER_CELLS;
    const status = numbers[at + STATUS];
    if (status === OTHER) {
      onOther(index, message.others[other++]![1]);
      continue;
    }
    const out = stdout.take(numbers[at + STDOUT_LINES]!);
    const err = stderr.take(numbers[at + STDERR_LINES]!);
    const fuel = fuelUsed[j]!;
    const durationNs = numbers[at + DURATION]!;
    if (status === EXECUTED) {
      onExecution(index, { ok: true, stdout: out, stderr: err, fuelUsed: fuel, durationNs, memoryBytes: numbers[at + MEMORY]! });
    } else {
      const [, reason, text] = message.failures[failure++]!;
      onExecution(index, { ok: false, failure: reason, message: text, stdout: out, stderr: err, fuelUsed: fuel, durationNs, memoryBytes: 0 });
    }
  }
}

/** The pool's side of `BatchMessage`: executions into columns, the rest as objects. */
export function writeBatch(
  batch: number,
  growthPages: number,
  items: ReadonlyArray<ExecutionItem | WorkerRequest>,
  loan: BatchLoan | null = null,
): { message: BatchMessage; transfer: ArrayBuffer[] } {
  let bytes = 0;
  for (const item of items) if (item.op === 'execute') bytes += item.input.length;
  const cellBytes = items.length * EXECUTION_CELLS * 4;
  const buffer = new ArrayBuffer(cellBytes + bytes);
  const executions = new Int32Array(buffer, 0, items.length * EXECUTION_CELLS);
  const inputs = new Uint8Array(buffer, cellBytes, bytes);
  const others: Array<[number, WorkerRequest]> = [];
  let offset = 0;
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!;
    if (item.op !== 'execute') {
      others.push([i, item]);
      continue;
    }
    executions[i * EXECUTION_CELLS] = item.agent;
    executions[i * EXECUTION_CELLS + 1] = offset;
    inputs.set(item.input, offset);
    offset += item.input.length;
    executions[i * EXECUTION_CELLS + 2] = offset;
  }
  const message: BatchMessage = { kind: 'batch', batch, count: items.length, growthPages, executions, inputs, others, loan };
  return { message, transfer: [buffer] };
}
