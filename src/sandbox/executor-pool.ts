/**
 * The executor pool: agent instances live in worker threads, never on the
 * main thread (DESIGN.md sections 1 and 6). Its types are in types.ts.
 *
 * API
 * - `instantiate(agentId, admitted, { memoryLimitBytes, snapshot? }): Promise<Placement>`
 *   places the agent on the worker with the fewest instances, instantiates it
 *   there and runs `_initialize`/`_start` (per `info.startExport`) with
 *   `startupFuel` under `startupTimeoutMs`; given a snapshot it restores
 *   memory and globals instead. Resolves `{ memoryBytes, workerId, log }`;
 *   rejects with an `SvcError` whose `metadata.reason` is an
 *   `ExecutionFailure` (codes in `INSTANTIATE_ERRORS`), or RESOURCE_EXHAUSTED
 *   when the memory does not fit. When it fits only once the growth granted
 *   to batches in flight is settled, it waits for that (milliseconds).
 * - `execute(agentId, input): Promise<ExecutionResult>` runs `handle` once with
 *   `input` on fd 0 and never rejects except for `maxPendingExecutions`. After
 *   any failure the instance is discarded (its state may be half-updated);
 *   the supervisor instantiates it again.
 * - `snapshot(agentId): Promise<InstanceSnapshot>`, `release(agentId): Promise<void>`,
 *   `memoryBytes(agentId): number`, `totalMemoryBytes(): number`,
 *   `stats(): ExecutorPoolStats`, `close(): Promise<void>`, and
 *   `on('workerLost', listener): unsubscribe`.
 *
 * Batching: calls queue per worker and leave as one `batch` message of up to
 * `maxBatchSize` on the next `setImmediate`, or when the batch in flight is
 * answered, together with the calls its results led to (agents answering
 * agents fill whole batches that way, rather than splitting into ever smaller
 * ones). A postMessage round trip (20–50 µs) and a wake-up are paid per batch.
 * A worker is sent one batch at a time, and a second (`MAX_BATCHES_IN_FLIGHT`)
 * only when a whole batch waits, so under a full load it starts the next
 * without waiting for the main thread to settle the last. A second batch
 * posted whenever one was in flight split a steady load into two half batches
 * taking turns for the life of the process: twice the posts, and 13–27% more
 * CPU a message (docs/benchmarks.md, "Thirty-first pass").
 *
 * Concurrency (`max_concurrent_executions`): a worker runs one request at a
 * time, so at most `workers` executions run at once by construction;
 * `maxPendingExecutions` bounds those queued or running.
 *
 * Memory (memory-ledger.ts): instantiation reserves the initial size (the
 * snapshot size, or the module maximum when a wasm start section could grow
 * it) and is refused when that does not fit `wasmMemoryLimitBytes`. Growth
 * goes through `__svc_memory_budget`: each batch carries a grant of headroom,
 * at most what its agents could still grow by (up to the smaller of their
 * limit and their module's maximum), and the worker sets every execution's
 * budget to min(the agent's limit, what is left of the grant). What the
 * unanswered items of a long batch cannot use is given back with each partial
 * answer, the rest when the batch is done. Every result reports the
 * instance's memory, which becomes the agent's `memoryBytes`.
 *
 * Watchdog (watchdog.ts): a worker whose run overstays its timeout is
 * terminated and replaced at once by a warm spare (executor-threads.ts); the
 * overrunning call fails with `timeout`, every other pending call on that
 * worker with `worker_lost`, and `workerLost` names the agents it took along.
 */
import { availableParallelism } from 'node:os';
import { SvcError, type ErrorCode } from '../errors/svc-error.js';
import { createWatchdog, type Overrun } from './watchdog.js';
import { createMemoryLedger } from './memory-ledger.js';
import { createThreadSet, type Thread } from './executor-threads.js';
import {
  MAX_BATCHES_IN_FLIGHT,
  WASM_PAGE_BYTES,
  readAnswers,
  writeBatch,
  type ExecutionItem,
  type InstantiateRequest,
  type ReleaseRequest,
  type ResultsMessage,
  type SnapshotRequest,
  type WorkerResult,
} from './worker-protocol.js';
import type { AdmittedModule, ExecutionFailure, ExecutionResult, ExecutorPool, ExecutorPoolOptions, InstanceSnapshot, Placement, WorkerLostEvent } from './types.js';

export type { ExecutorPool, ExecutorPoolOptions, ExecutorPoolStats, InstantiateOptions, Placement, WorkerLostEvent } from './types.js';

/** Calls per batch message: large enough to amortize postMessage, small enough to keep answers flowing. */
export const DEFAULT_MAX_BATCH_SIZE = 256;

/** How a failed instantiation reaches callers; `metadata.reason` keeps the precise failure. */
export const INSTANTIATE_ERRORS: Readonly<Record<ExecutionFailure, ErrorCode>> = {
  trap: 'INVALID_MODULE',
  fuel_exhausted: 'INVALID_MODULE',
  output_limit: 'INVALID_MODULE',
  memory_limit: 'RESOURCE_EXHAUSTED',
  timeout: 'DEADLINE_EXCEEDED',
  worker_lost: 'UNAVAILABLE',
  not_instantiated: 'INTERNAL',
};

type Loss = 'timeout' | 'worker_lost';

interface Agent {
  id: string;
  /** The number requests use for this instance (unique per instantiation). */
  index: number;
  worker: WorkerSlot;
  sha256: string;
  limitPages: number;
  /** Pages its memory can reach: its limit, or its module's maximum when lower. */
  maxPages: number;
  memoryBytes: number;
  /** The `wantedPages` pass that last counted it, so an agent with several items counts once. */
  counted: number;
}

/** An instantiation whose memory is reserved (or waits to be), to be placed on a worker. */
interface PlacementRequest {
  agentId: string;
  admitted: AdmittedModule;
  snapshot: InstanceSnapshot | null;
  limitPages: number;
  reserveBytes: number;
  resolve(placement: Placement): void;
  reject(error: SvcError): void;
}

/** A call queued or in flight; settled by `settle` from the worker's answer or by `lose`. */
type Pending =
  | { op: 'instantiate'; req: InstantiateRequest; owner: Agent; resolve(placement: Placement): void; reject(error: SvcError): void }
  | (ExecutionItem & { owner: Agent; resolve(result: ExecutionResult): void })
  | { op: 'snapshot'; req: SnapshotRequest; owner: Agent; resolve(snapshot: InstanceSnapshot): void; reject(error: SvcError): void }
  | { op: 'release'; req: ReleaseRequest; owner: Agent; resolve(): void };

interface Batch {
  items: Pending[];
  /** Items before this index are answered; the worker answers in order. */
  answered: number;
  /** Pages reserved for growth while the batch runs. */
  grant: number;
}

function unanswered(batches: Iterable<Batch>): Pending[] {
  return [...batches].flatMap((b) => b.items.slice(b.answered));
}

/** One of the pool's `workers` places; its thread is replaced when lost, its id stays. */
interface WorkerSlot {
  id: number;
  thread: Thread;
  queue: Pending[];
  batches: Map<number, Batch>;
  nextBatch: number;
  flushScheduled: boolean;
  /** Its thread died before it ever started; no calls go there any more. */
  broken: boolean;
  agents: Set<string>;
  /** Instances per module on this worker; a module is sent with the first and evicted after the last. */
  modules: Map<string, number>;
}

function emptyResult(failure: ExecutionFailure, message: string): ExecutionResult {
  return { ok: false, failure, message, stdout: [], stderr: [], fuelUsed: 0n, durationNs: 0, memoryBytes: 0 };
}

const LOSS_MESSAGES: Readonly<Record<Loss, string>> = {
  timeout: 'the run overstayed its timeout; its worker was terminated',
  worker_lost: 'the worker was terminated while the call was pending',
};

export function createExecutorPool(options: ExecutorPoolOptions): ExecutorPool {
  const workerCount = options.workers !== undefined && options.workers > 0 ? options.workers : availableParallelism();
  const maxBatch = options.maxBatchSize ?? DEFAULT_MAX_BATCH_SIZE;
  const maxPending = options.maxPendingExecutions ?? Number.POSITIVE_INFINITY;
  const agents = new Map<string, Agent>();
  /** Instantiations waiting for granted growth to settle, by agent id. */
  const waiting = new Map<string, PlacementRequest>();
  const memory = createMemoryLedger(options.wasmMemoryLimitBytes, workerCount * MAX_BATCHES_IN_FLIGHT);
  const listeners = new Set<(event: WorkerLostEvent) => void>();
  const failures: Partial<Record<ExecutionFailure, number>> = {};
  const counters = { batches: 0, modulesSent: 0, executions: 0, instantiations: 0, instantiateNs: 0, workersLost: 0 };
  let pendingExecutions = 0;
  let nextAgentIndex = 0;
  let countingPass = 0;
  let closed = false;

  const threads = createThreadSet({
    init: { outputLimits: options.outputLimits, executionFuel: options.fuelPerExecution, startupFuel: options.startupFuel ?? options.fuelPerExecution },
    stackLimitBytes: options.stackLimitBytes,
    spares: options.spareWorkers ?? 1,
    onMessage: (thread, message) => {
      if (message.kind === 'results' && thread.owner !== null) onResults(slots[thread.owner]!, message);
      else if (message.kind === 'ready') checkStarted();
    },
    onExit: (thread) => {
      if (thread.owner !== null) loseWorker(slots[thread.owner]!, null, thread.ready);
      checkStarted();
    },
  });

  // Settled once every worker place has a thread that started, or is broken (its thread died before starting).
  let markStarted: () => void = () => undefined;
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  function checkStarted(): void {
    if (slots.every((slot) => slot.thread.ready || slot.broken)) markStarted();
  }

  const watchdog = createWatchdog({
    executionTimeoutMs: options.executionTimeoutMs,
    startupTimeoutMs: options.startupTimeoutMs,
    periodMs: options.watchdogPeriodMs,
    onOverrun: (overrun) => loseWorker(slots[overrun.workerId]!, overrun, true),
  });

  const slots: WorkerSlot[] = Array.from({ length: workerCount }, (_, id) => {
    const thread = threads.spawn(id);
    watchdog.watch(id, thread.slot);
    return { id, thread, queue: [], batches: new Map(), nextBatch: 0, flushScheduled: false, broken: false, agents: new Set(), modules: new Map() };
  });
  watchdog.start();

  /** What the agents of `items[from..]` could still grow by in all, each up to its `maxPages`. */
  function wantedPages(items: readonly Pending[], from = 0): number {
    countingPass += 1;
    let wanted = 0;
    for (let i = from; i < items.length; i++) {
      const p = items[i]!;
      if ((p.op !== 'execute' && p.op !== 'instantiate') || p.owner.counted === countingPass) continue;
      p.owner.counted = countingPass;
      wanted += Math.max(0, p.owner.maxPages - p.owner.memoryBytes / WASM_PAGE_BYTES);
    }
    return wanted;
  }

  function sendBatch(slot: WorkerSlot): void {
    const items = slot.queue.splice(0, maxBatch);
    const batch: Batch = { items, answered: 0, grant: memory.grant(wantedPages(items)) };
    const number = ++slot.nextBatch;
    slot.batches.set(number, batch);
    counters.batches += 1;
    const { message, transfer } = writeBatch(number, batch.grant, items.map((p) => (p.op === 'execute' ? p : p.req)));
    slot.thread.worker.postMessage(message, transfer);
  }

  /** One batch at a time, and a second only when a whole one waits (see "Batching" above). */
  function mayPost(slot: WorkerSlot): boolean {
    return slot.batches.size === 0 || (slot.batches.size < MAX_BATCHES_IN_FLIGHT && slot.queue.length >= maxBatch);
  }

  function flush(slot: WorkerSlot): void {
    while (!closed && slot.queue.length > 0 && mayPost(slot)) sendBatch(slot);
  }

  function enqueue(slot: WorkerSlot, pending: Pending): void {
    if (closed || slot.broken) return lose(pending, 'worker_lost');
    slot.queue.push(pending);
    if (!mayPost(slot) || slot.flushScheduled) return;
    slot.flushScheduled = true;
    // Deferred so the calls made in this turn of the event loop share one batch.
    setImmediate(() => {
      slot.flushScheduled = false;
      flush(slot);
    });
  }

  function onResults(slot: WorkerSlot, message: ResultsMessage): void {
    const batch = slot.batches.get(message.batch);
    if (batch === undefined) return;
    readAnswers(
      message,
      (i, result) => {
        const p = batch.items[i];
        if (p?.op === 'execute') finishExecution(p, result);
      },
      (i, result) => settle(batch.items[i]!, result),
    );
    batch.answered = message.from + message.count;
    if (!message.done) {
      // The items still to run cannot grow by more than their agents' headroom: the rest of the grant is free now.
      const wanted = wantedPages(batch.items, batch.answered);
      if (wanted < batch.grant) {
        memory.reduce(batch.grant - wanted);
        batch.grant = wanted;
      }
      return;
    }
    slot.batches.delete(message.batch);
    memory.release(batch.grant);
    // After the reactions to these results have run, so the calls they make (an agent's reply
    // to the next agent) leave together with those already queued, in one batch.
    queueMicrotask(() => flush(slot));
  }

  /** Forgets an agent's instance bookkeeping; returns the module to evict from its worker, if it was the last user. */
  function detach(agent: Agent): string | null {
    agents.delete(agent.id);
    const slot = agent.worker;
    slot.agents.delete(agent.id);
    const users = (slot.modules.get(agent.sha256) ?? 1) - 1;
    if (users > 0) slot.modules.set(agent.sha256, users);
    else slot.modules.delete(agent.sha256);
    return users > 0 ? null : agent.sha256;
  }

  /** After a failure the worker has already dropped the instance; this frees its memory and maybe its module. */
  function discard(agent: Agent): void {
    if (agents.get(agent.id) !== agent) return;
    memory.set(agent, 0);
    const dropModule = detach(agent);
    if (dropModule === null) return;
    const req: ReleaseRequest = { op: 'release', agent: agent.index, dropModule };
    enqueue(agent.worker, { op: 'release', req, owner: agent, resolve: () => undefined });
  }

  function count(failure: ExecutionFailure): void {
    failures[failure] = (failures[failure] ?? 0) + 1;
  }

  function failInstantiate(p: Extract<Pending, { op: 'instantiate' }>, failure: ExecutionFailure, message: string): void {
    count(failure);
    discard(p.owner);
    p.reject(new SvcError(INSTANTIATE_ERRORS[failure], message, { agent_id: p.owner.id, reason: failure }));
  }

  function finishExecution(p: Extract<Pending, { op: 'execute' }>, result: ExecutionResult): void {
    pendingExecutions -= 1;
    counters.executions += 1;
    if (result.ok) memory.set(p.owner, result.memoryBytes);
    else {
      count(result.failure);
      discard(p.owner);
    }
    p.resolve(result);
  }

  /** Settles an item that is not an execution (those are settled from the result columns). */
  function settle(p: Pending, result: WorkerResult): void {
    if (p.op === 'instantiate' && result.op === 'instantiate') {
      if (!result.ok) return failInstantiate(p, result.failure, result.message);
      counters.instantiations += 1;
      counters.instantiateNs += result.durationNs;
      memory.set(p.owner, result.memoryBytes);
      p.resolve({ memoryBytes: result.memoryBytes, workerId: p.owner.worker.id, log: result.log });
    } else if (p.op === 'snapshot' && result.op === 'snapshot') {
      if (result.ok) p.resolve(result.snapshot);
      else p.reject(new SvcError('NOT_FOUND', result.message, { agent_id: p.owner.id }));
    } else if (p.op === 'release') {
      memory.set(p.owner, 0);
      p.resolve();
    }
  }

  function lose(p: Pending, loss: Loss): void {
    switch (p.op) {
      case 'instantiate':
        return failInstantiate(p, loss, LOSS_MESSAGES[loss]);
      case 'execute':
        return finishExecution(p, emptyResult(loss, LOSS_MESSAGES[loss]));
      case 'snapshot':
        return p.reject(new SvcError('UNAVAILABLE', LOSS_MESSAGES[loss], { agent_id: p.owner.id, reason: loss }));
      case 'release':
        memory.set(p.owner, 0);
        return p.resolve();
    }
  }

  /**
   * A thread that dies before it ever started would die again: its place is
   * marked broken instead of respawning in a loop (`replace` false).
   */
  function loseWorker(slot: WorkerSlot, overrun: Overrun | null, replace: boolean): void {
    if (closed) return;
    counters.workersLost += 1;
    const overranBatch = overrun === null ? undefined : slot.batches.get(overrun.batch);
    const overranCall = overrun !== null && overranBatch !== undefined && overrun.index >= overranBatch.answered ? overranBatch.items[overrun.index] : undefined;
    const pendings = unanswered(slot.batches.values()).concat(slot.queue);
    const overran = overranCall?.owner.id ?? null;
    const lost = [...slot.agents].filter((id) => id !== overran);
    const { batches, agents: hosted } = slot;
    watchdog.unwatch(slot.id);
    threads.retire(slot.thread);
    Object.assign(slot, { queue: [], batches: new Map(), agents: new Set(), modules: new Map() });
    if (replace) {
      slot.thread = threads.replace(slot.id);
      watchdog.watch(slot.id, slot.thread.slot);
    } else slot.broken = true;
    // Only now is memory freed: it may place waiting instantiations, which must find the slot whole again.
    for (const batch of batches.values()) memory.release(batch.grant);
    // Every instance on the thread died with it, so all its memory is free again.
    for (const id of hosted) {
      const agent = agents.get(id);
      if (agent !== undefined) {
        agents.delete(id);
        memory.set(agent, 0);
      }
    }
    for (const p of pendings) lose(p, p === overranCall ? 'timeout' : 'worker_lost');
    const event: WorkerLostEvent = { workerId: slot.id, overran, lost };
    for (const listener of listeners) listener(event);
  }

  function leastLoaded(): WorkerSlot | undefined {
    let best: WorkerSlot | undefined;
    for (const s of slots) if (!s.broken && (best === undefined || s.agents.size < best.agents.size)) best = s;
    return best;
  }

  function refuse(code: ErrorCode, message: string, metadata: Record<string, string> = {}): Promise<never> {
    return Promise.reject(new SvcError(code, message, metadata));
  }

  function memoryExhausted(agentId: string): SvcError {
    return new SvcError('RESOURCE_EXHAUSTED', 'wasm memory limit of the executor pool reached', { agent_id: agentId, reason: 'memory_limit' });
  }

  /** Puts an instantiation whose memory is reserved on the worker with the fewest instances. */
  function place(r: PlacementRequest): void {
    const slot = leastLoaded();
    if (slot === undefined) {
      memory.set({ memoryBytes: r.reserveBytes }, 0);
      return r.reject(new SvcError('UNAVAILABLE', 'no executor worker could start', { last_error: threads.lastError() ?? '' }));
    }
    const { agentId, admitted } = r;
    nextAgentIndex = (nextAgentIndex + 1) | 0;
    const maxPages = Math.min(r.limitPages, admitted.info.memory.maximumPages);
    const agent: Agent = { id: agentId, index: nextAgentIndex, worker: slot, sha256: admitted.sha256, limitPages: r.limitPages, maxPages, memoryBytes: r.reserveBytes, counted: 0 };
    agents.set(agentId, agent);
    slot.agents.add(agentId);
    const users = slot.modules.get(admitted.sha256) ?? 0;
    slot.modules.set(admitted.sha256, users + 1);
    if (users === 0) counters.modulesSent += 1;
    const req: InstantiateRequest = {
      op: 'instantiate',
      agent: agent.index,
      sha256: admitted.sha256,
      module: users === 0 ? admitted.module : null,
      globalExports: admitted.globalExports,
      startExport: admitted.info.startExport,
      memoryLimitPages: r.limitPages,
      snapshot: r.snapshot,
    };
    enqueue(slot, { op: 'instantiate', req, owner: agent, resolve: r.resolve, reject: r.reject });
  }

  return {
    started: () => started,

    instantiate(agentId, admitted, opts) {
      if (closed) return refuse('UNAVAILABLE', 'executor pool is closed');
      if (agents.has(agentId) || waiting.has(agentId)) return refuse('ALREADY_EXISTS', `agent ${agentId} already has an instance`, { agent_id: agentId });
      const limitPages = Math.floor(opts.memoryLimitBytes / WASM_PAGE_BYTES);
      const snapshotPages = opts.snapshot === undefined ? 0 : opts.snapshot.memory.byteLength / WASM_PAGE_BYTES;
      // A wasm start section runs before the budget global can be set, so it may grow up to the module's maximum.
      const { initialPages, maximumPages } = admitted.info.memory;
      const startPages = admitted.info.hasStartSection ? Math.min(maximumPages, limitPages) : initialPages;
      const reserveBytes = Math.max(initialPages, startPages, snapshotPages) * WASM_PAGE_BYTES;
      if (reserveBytes > limitPages * WASM_PAGE_BYTES) {
        return refuse('RESOURCE_EXHAUSTED', 'initial memory exceeds the agent memory limit', { agent_id: agentId, reason: 'memory_limit' });
      }
      if (leastLoaded() === undefined) return refuse('UNAVAILABLE', 'no executor worker could start', { last_error: threads.lastError() ?? '' });
      return new Promise<Placement>((resolve, reject) => {
        const request: PlacementRequest = { agentId, admitted, snapshot: opts.snapshot ?? null, limitPages, reserveBytes, resolve, reject };
        const reservation = memory.reserve(reserveBytes, (reserved) => {
          // Gone from `waiting` when the pool closed meanwhile (and rejected it).
          if (!waiting.delete(agentId)) return;
          if (reserved) place(request);
          else reject(memoryExhausted(agentId));
        });
        if (reservation === 'reserved') place(request);
        else if (reservation === 'waiting') waiting.set(agentId, request);
        else reject(memoryExhausted(agentId));
      });
    },

    execute(agentId, input) {
      if (closed) return Promise.resolve(emptyResult('worker_lost', 'executor pool is closed'));
      const agent = agents.get(agentId);
      if (agent === undefined) return Promise.resolve(emptyResult('not_instantiated', `agent ${agentId} has no instance`));
      if (pendingExecutions >= maxPending) return refuse('RESOURCE_EXHAUSTED', 'too many executions pending', { reason: 'max_concurrent_executions' });
      pendingExecutions += 1;
      return new Promise<ExecutionResult>((resolve) => enqueue(agent.worker, { op: 'execute', agent: agent.index, input, owner: agent, resolve }));
    },

    snapshot(agentId) {
      const agent = agents.get(agentId);
      if (agent === undefined) return refuse('NOT_FOUND', `agent ${agentId} has no instance`, { agent_id: agentId });
      const req: SnapshotRequest = { op: 'snapshot', agent: agent.index };
      return new Promise<InstanceSnapshot>((resolve, reject) => enqueue(agent.worker, { op: 'snapshot', req, owner: agent, resolve, reject }));
    },

    release(agentId) {
      const agent = agents.get(agentId);
      if (agent === undefined) return Promise.resolve();
      // The memory stays counted until the worker has dropped the instance.
      const req: ReleaseRequest = { op: 'release', agent: agent.index, dropModule: detach(agent) };
      return new Promise<void>((resolve) => enqueue(agent.worker, { op: 'release', req, owner: agent, resolve }));
    },

    memoryBytes: (agentId) => agents.get(agentId)?.memoryBytes ?? 0,
    totalMemoryBytes: () => memory.committedBytes(),

    stats: () => ({
      workers: slots.length,
      startedWorkers: slots.filter((slot) => slot.thread.ready).length,
      spareWorkers: threads.spareCount(),
      instances: agents.size,
      waitingInstantiations: waiting.size,
      pendingCalls: slots.reduce((n, s) => n + s.queue.length + unanswered(s.batches.values()).length, 0),
      batches: counters.batches,
      modulesSent: counters.modulesSent,
      executions: counters.executions,
      failures: { ...failures },
      workersLost: counters.workersLost,
      lastRespawnMs: threads.lastRespawnMs(),
      lastSpawnMs: threads.lastSpawnMs(),
      meanInstantiateNs: counters.instantiations === 0 ? 0 : counters.instantiateNs / counters.instantiations,
      totalMemoryBytes: memory.committedBytes(),
      memoryLimitBytes: memory.limitBytes,
    }),

    on(_event, listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },

    async close() {
      if (closed) return;
      closed = true;
      // Nothing waits for threads that will not start now.
      markStarted();
      watchdog.stop();
      const unplaced = [...waiting.values()];
      waiting.clear();
      for (const r of unplaced) r.reject(new SvcError('UNAVAILABLE', 'executor pool is closed', { agent_id: r.agentId }));
      const pendings = slots.flatMap((s) => unanswered(s.batches.values()).concat(s.queue));
      for (const s of slots) Object.assign(s, { queue: [], batches: new Map() });
      for (const p of pendings) lose(p, 'worker_lost');
      await threads.close();
    },
  };
}
