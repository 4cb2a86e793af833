/**
 * Per-worker batching: the calls for one worker queue here and leave as one
 * `batch` message of up to `maxBatchSize` on the next `setImmediate`, or when
 * the batch in flight is answered, together with the calls its results led
 * to (agents answering agents fill whole batches that way, rather than
 * splitting into ever smaller ones). A postMessage round trip (20–50 µs) and a
 * wake-up are paid per batch.
 *
 * A worker is sent one batch at a time, and a second (`MAX_BATCHES_IN_FLIGHT`)
 * only when a whole batch waits, so under a full load it starts the next
 * without waiting for the main thread to settle the last. A second batch
 * posted whenever one was in flight split a steady load into two half
 * batches taking turns for the life of the process: twice the posts, and
 * 13–27% more CPU a message.
 *
 * Each batch carries a grant of memory headroom from the ledger, at most what
 * its instances could still grow by; what the unanswered calls of a long
 * batch cannot use is given back with each partial answer, the rest when the
 * batch is done.
 */
import type { SvcError } from '../errors/svc-error.js';
import type { MemoryLedger } from './memory-ledger.js';
import type { PooledInstance } from './pool-instance.js';
import type { Borrower, ExecutionResult, InstanceSnapshot, Placement } from './types.js';
import {
  MAX_BATCHES_IN_FLIGHT,
  readAnswers,
  writeBatch,
  type BatchMessage,
  type ExecutionItem,
  type InstantiateRequest,
  type ReleaseRequest,
  type ResultsMessage,
  type SnapshotRequest,
  type WorkerResult,
  type BatchLoan,
} from './worker-protocol.js';

export type ExecuteCall = ExecutionItem & { owner: PooledInstance; onResult(result: ExecutionResult): void };
export type InstantiateCall = { op: 'instantiate'; req: InstantiateRequest; owner: PooledInstance; resolve(placement: Placement): void; reject(error: SvcError): void };
export type SnapshotCall = { op: 'snapshot'; req: SnapshotRequest; owner: PooledInstance; resolve(snapshot: InstanceSnapshot): void; reject(error: SvcError): void };
export type ReleaseCall = { op: 'release'; req: ReleaseRequest; owner: PooledInstance; resolve(): void };

/** What a batch was lent (pool-loans.ts): the terms the worker reads, the borrowers by instance number. */
export interface Loan {
  readonly terms: BatchLoan;
  readonly borrowers: ReadonlyMap<number, { readonly owner: PooledInstance; readonly borrower: Borrower }>;
}

/** A call queued for a worker or in flight there; settled from the worker's answer, or by the pool when lost. */
export type Call = ExecuteCall | InstantiateCall | SnapshotCall | ReleaseCall;

interface Batch {
  items: Call[];
  /** Items before this index are answered; the worker answers in order. */
  answered: number;
  /** Pages reserved for growth while the batch runs. */
  grant: number;
  /** Instances lent to it for worker-local delivery (pool-loans.ts). */
  loan: Loan | undefined;
}

export interface WorkerBatchesOptions {
  maxBatchSize: number;
  ledger: MemoryLedger;
  /** Posts to the worker's current thread. */
  post(message: BatchMessage, transfer: ArrayBuffer[]): void;
  /** An execution's answer. */
  executed(call: ExecuteCall, result: ExecutionResult): void;
  /** The answer to any other call. */
  answered(call: Call, result: WorkerResult): void;
  /** What a batch of `items` is lent as it leaves. */
  lend(items: readonly Call[]): Loan | undefined;
  /** A hop the worker appended to a batch: an execution the pool counts as pending from now. */
  hopped(call: ExecuteCall): void;
}

export interface WorkerBatches {
  enqueue(call: Call): void;
  /** A `results` message of this worker's thread. */
  results(message: ResultsMessage): void;
  /** Calls not answered yet, queued or in flight. */
  pending(): number;
  /** Batches posted and not yet answered in full. */
  inFlight(): number;
  /** Item `index` of batch `batch`, unless answered already. */
  unanswered(batch: number, index: number): Call | undefined;
  /** Batches posted so far. */
  readonly posted: number;
  /** Takes every call not answered yet, queued or in flight, the grants and the loans of the batches in flight. */
  drain(): { calls: Call[]; grants: number[]; loans: Loan[] };
}

function* growers(items: readonly Call[], from: number, loan?: Loan): Generator<PooledInstance> {
  for (let i = from; i < items.length; i++) {
    const call = items[i]!;
    if (call.op === 'execute' || call.op === 'instantiate') yield call.owner;
  }
  if (loan !== undefined) for (const { owner } of loan.borrowers.values()) yield owner;
}

const NO_INPUT = new Uint8Array(0);

/** Returns a loan's instances to their agents. */
export function endLoan(loan: Loan | undefined): void {
  if (loan !== undefined) for (const { borrower } of loan.borrowers.values()) borrower.returned();
}

export function createWorkerBatches(options: WorkerBatchesOptions): WorkerBatches {
  const { maxBatchSize, ledger, post, executed, answered, lend, hopped } = options;
  let queue: Call[] = [];
  let batches = new Map<number, Batch>();
  let nextBatch = 0;
  let posted = 0;
  let flushScheduled = false;

  function send(): void {
    const items = queue.splice(0, maxBatchSize);
    const loan = lend(items);
    const batch: Batch = { items, answered: 0, grant: ledger.grant(ledger.wantedPages(growers(items, 0, loan))), loan };
    const number = ++nextBatch;
    batches.set(number, batch);
    posted += 1;
    const requests = items.map((call) => (call.op === 'execute' ? call : call.req));
    const { message, transfer } = writeBatch(number, batch.grant, requests, loan?.terms ?? null);
    post(message, transfer);
  }

  /** One batch at a time, and a second only when a whole one waits. */
  function mayPost(): boolean {
    return batches.size === 0 || (batches.size < MAX_BATCHES_IN_FLIGHT && queue.length >= maxBatchSize);
  }

  function flush(): void {
    while (queue.length > 0 && mayPost()) send();
  }

  /** Appends the hops a results message announces to its batch; returns each item's local sends. */
  function hops(batch: Batch, loan: Loan, message: ResultsMessage): Map<number, Array<[number, string]>> {
    const sends = new Map<number, Array<[number, string]>>();
    for (const [item, line, agent, json] of message.local) {
      const lent = loan.borrowers.get(agent)!;
      const call: ExecuteCall = { op: 'execute', agent, input: NO_INPUT, owner: lent.owner, onResult: lent.borrower.onResult };
      batch.items.push(call);
      hopped(call);
      const list = sends.get(item);
      if (list === undefined) sends.set(item, [[line, json]]);
      else list.push([line, json]);
    }
    return sends;
  }

  return {
    enqueue(call) {
      queue.push(call);
      if (!mayPost() || flushScheduled) return;
      flushScheduled = true;
      // Deferred so the calls made in this turn of the event loop share one batch.
      setImmediate(() => {
        flushScheduled = false;
        flush();
      });
    },

    results(message) {
      const batch = batches.get(message.batch);
      if (batch === undefined) return;
      const sends = batch.loan === undefined ? undefined : hops(batch, batch.loan, message);
      readAnswers(
        message,
        (i, result) => {
          const call = batch.items[i];
          const local = sends?.get(i);
          if (call?.op === 'execute') executed(call, local === undefined ? result : { ...result, local });
        },
        (i, result) => answered(batch.items[i]!, result),
      );
      // Drained by a reaction to these answers (the pool closed): its grant went with it.
      if (batches.get(message.batch) !== batch) return;
      batch.answered = message.from + message.count;
      if (!message.done) {
        // A lent instance may still run and grow: the grant stays whole until the batch is done.
        if (batch.loan !== undefined) return;
        // The calls still to run cannot grow by more than their instances' headroom: the rest of the grant is free now.
        const wanted = ledger.wantedPages(growers(batch.items, batch.answered));
        if (wanted < batch.grant) {
          ledger.reduce(batch.grant - wanted);
          batch.grant = wanted;
        }
        return;
      }
      batches.delete(message.batch);
      ledger.release(batch.grant);
      endLoan(batch.loan);
      // After the reactions to these results have run, so the calls they make (an agent's reply
      // to the next agent) leave together with those already queued, in one batch.
      queueMicrotask(flush);
    },

    pending() {
      let n = queue.length;
      for (const batch of batches.values()) n += batch.items.length - batch.answered;
      return n;
    },

    inFlight: () => batches.size,

    unanswered(number, index) {
      const batch = batches.get(number);
      return batch !== undefined && index >= batch.answered ? batch.items[index] : undefined;
    },

    get posted() {
      return posted;
    },

    drain() {
      const inFlight = [...batches.values()];
      const calls = inFlight.flatMap((batch) => batch.items.slice(batch.answered)).concat(queue);
      queue = [];
      batches = new Map();
      const loans = inFlight.flatMap((batch) => (batch.loan === undefined ? [] : [batch.loan]));
      return { calls, grants: inFlight.map((batch) => batch.grant), loans };
    },
  };
}
