/**
 * The executor pool: agent instances live in worker threads, never on the
 * main thread (DESIGN.md sections 1 and 6). Types in types.ts; parts:
 * placement.ts, worker-batches.ts, module-cache.ts, memory-ledger.ts,
 * executor-threads.ts (threads, warm spares), lanes.ts and probation.ts
 * (runaways apart), watchdog.ts. This file composes them and handles the
 * loss of a worker.
 *
 * API
 * - `instantiate(admitted, { label, memoryLimitBytes, snapshot?, onLost? })`
 *   places an instance on the worker of its lane with the fewest, runs its
 *   start functions (`__svc_start`, then `_initialize`/`_start`) with
 *   `startupFuel` under `startupTimeoutMs`, or restores a snapshot's memory
 *   and globals (then, with `upgrade`, runs `_upgrade`). Resolves
 *   `{ instance, memoryBytes, workerId, log }`; rejects with an `SvcError`
 *   (`metadata.reason` an `ExecutionFailure`, pool-failures.ts), or
 *   RESOURCE_EXHAUSTED when the memory does not fit, not even once the
 *   growth granted to batches in flight is settled (it waits for that).
 * - `execute(instance, input, onResult)` runs `handle` once with `input` on
 *   fd 0. `onResult` is the one channel: a refusal (`overloaded` past
 *   `maxPendingExecutions`, `closed`, `not_instantiated`) is a result too.
 *   After any other failure the instance is gone (its state may be
 *   half-updated); its owner instantiates it again.
 * - `snapshot`, `release`, `memoryBytes`, `totalMemoryBytes`, `stats`, `close`, `on('workerLost')`.
 * - `lendWith(lender)` turns on worker-local delivery (pool-loans.ts, worker-local.ts).
 *
 * Concurrency: a worker runs one call at a time, so at most `workers` run at
 * once; `maxPendingExecutions` bounds those queued or running.
 *
 * Loss: a worker whose run overstays its timeout is terminated by the
 * watchdog (ticking only while a batch is in flight, so an idle server sets
 * no timer) and replaced by a warm spare; the overrunning call fails with
 * `timeout`, every other call there with `worker_lost`, every other instance
 * there is gone (`onLost`), and `workerLost` names them.
 */
import { availableParallelism } from 'node:os';
import { createRealClock } from '../../supervisors/index.js';
import { SvcError } from '../errors/svc-error.js';
import { createThreadSet, type ThreadSet } from './executor-threads.js';
import { createLanes } from './lanes.js';
import { createMemoryLedger } from './memory-ledger.js';
import { INSTANTIATE_ERRORS, LOSS_MESSAGES, emptyResult, type Loss } from './pool-failures.js';
import { createModuleCache } from './module-cache.js';
import { createPoolLoans } from './pool-loans.js';
import { createProbation } from './probation.js';
import type { Lane, WorkerSlot } from './placement.js';
import { PooledInstance, pooled } from './pool-instance.js';
import { poolStats, type PoolCounters } from './pool-stats.js';
import type { AdmittedModule, ExecutionFailure, ExecutionResult, ExecutorPool, ExecutorPoolOptions, InstanceHandle, InstanceSnapshot, Placement, WorkerLostEvent } from './types.js';
import { createWatchdog, type Overrun } from './watchdog.js';
import { createWorkerBatches, endLoan, type Call, type ExecuteCall, type InstantiateCall } from './worker-batches.js';
import { MAX_BATCHES_IN_FLIGHT, WASM_PAGE_BYTES, type BatchMessage, type InstantiateRequest, type WorkerResult } from './worker-protocol.js';

export type { ExecutorPool, ExecutorPoolOptions, ExecutorPoolStats, InstanceHandle, InstantiateOptions, Placement, WorkerLostEvent } from './types.js';
/** Calls per batch message: large enough to amortize postMessage, small enough to keep answers flowing. */
export const DEFAULT_MAX_BATCH_SIZE = 256;
/** An instantiation whose memory is reserved (or waits to be), to be placed on a worker. */
interface PlacementRequest {
  label: string;
  names: string[];
  workerId: number | undefined;
  admitted: AdmittedModule;
  snapshot: InstanceSnapshot | null;
  /** Run `_upgrade` after restoring `snapshot`. */
  upgrade: boolean;
  limitPages: number;
  reserveBytes: number;
  onLost: ((instance: InstanceHandle) => void) | undefined;
  resolve(placement: Placement): void;
  reject(error: SvcError): void;
}

export function createExecutorPool(options: ExecutorPoolOptions): ExecutorPool {
  const workerCount = options.workers !== undefined && options.workers > 0 ? options.workers : availableParallelism();
  const maxBatchSize = options.maxBatchSize ?? DEFAULT_MAX_BATCH_SIZE;
  const maxPending = options.maxPendingExecutions ?? Number.POSITIVE_INFINITY;
  const clock = options.clock ?? createRealClock();
  /** Instantiations waiting for granted growth to settle. */
  const waiting = new Set<PlacementRequest>();
  const isolatedCount = options.isolatedWorkers ?? 0;
  const ledger = createMemoryLedger(options.wasmMemoryLimitBytes, (workerCount + isolatedCount) * MAX_BATCHES_IN_FLIGHT);
  const listeners = new Set<(event: WorkerLostEvent) => void>();
  const failures: Partial<Record<ExecutionFailure, number>> = {};
  const counters: PoolCounters = { modulesSent: 0, executions: 0, instantiations: 0, instantiateNs: 0, workersLost: 0, localHops: 0 };
  let pendingExecutions = 0;
  let nextIndex = 0;
  let closed = false;

  // The slice only makes sense with a lane to move runaways to.
  const sliced = isolatedCount > 0 && options.sliceFuel !== undefined && options.sliceFuel < options.fuelPerExecution;
  const laneThreads = (executionFuel: bigint, spares: number): ThreadSet =>
    createThreadSet({
      init: { outputLimits: options.outputLimits, executionFuel, startupFuel: options.startupFuel ?? options.fuelPerExecution },
      stackLimitBytes: options.stackLimitBytes,
      spares,
      onMessage: (thread, message) => {
        if (message.kind === 'results' && thread.owner !== null) {
          slots[thread.owner]!.batches.results(message);
          idleWatchdog();
        } else if (message.kind === 'ready') checkStarted();
      },
      onExit: (thread) => {
        if (thread.owner !== null) loseWorker(slots[thread.owner]!, null, thread.ready);
        checkStarted();
      },
    });
  const sharedThreads = laneThreads(sliced ? options.sliceFuel! : options.fuelPerExecution, options.spareWorkers ?? 1);
  // No warm spare: a lost isolated worker makes runaways wait for a new thread, not the others.
  const isolatedThreads = laneThreads(options.fuelPerExecution, 0);
  const threadsOf = (slot: WorkerSlot): ThreadSet => (slot.lane === 'shared' ? sharedThreads : isolatedThreads);
  const probation = sliced ? createProbation() : undefined;
  const loans = createPoolLoans(probation);

  // Settled once every worker place has a thread that started, or is broken (its thread died before starting).
  let markStarted: () => void = () => undefined;
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  function checkStarted(): void {
    if (slots.every((slot) => slot.thread.ready || slot.broken)) markStarted();
  }

  const watchdog = createWatchdog({
    executionTimeoutMs: options.executionTimeoutMs,
    startupTimeoutMs: options.startupTimeoutMs,
    clock,
    ...(options.watchdogPeriodMs === undefined ? {} : { periodMs: options.watchdogPeriodMs }),
    onOverrun: (overrun) => loseWorker(slots[overrun.workerId]!, overrun, true),
  });

  function createSlot(id: number, lane: Lane): WorkerSlot {
    const thread = (lane === 'shared' ? sharedThreads : isolatedThreads).spawn(id);
    watchdog.watch(id, thread.slot);
    const post = (message: BatchMessage, transfer: ArrayBuffer[]): void => postTo(slot, message, transfer);
    const lend = (items: readonly Call[]) => (closed ? undefined : loans.lend(slot, items));
    const batches = createWorkerBatches({ maxBatchSize, ledger, post, executed, answered, lend, hopped });
    const slot: WorkerSlot = { id, lane, thread, broken: false, instances: new Set(), modules: createModuleCache(), batches };
    return slot;
  }
  const lanes = createLanes({ shared: workerCount, isolated: isolatedCount, createSlot });
  const slots = lanes.slots;

  function postTo(slot: WorkerSlot, message: BatchMessage, transfer: ArrayBuffer[]): void {
    slot.thread.worker.postMessage(message, transfer);
    watchdog.start();
  }

  const idleWatchdog = (): void => void (slots.every((slot) => slot.batches.inFlight() === 0) && watchdog.stop());

  function hopped(): void {
    pendingExecutions += 1;
    counters.localHops += 1;
  }

  const count = (failure: ExecutionFailure): void => void (failures[failure] = (failures[failure] ?? 0) + 1);

  function enqueue(slot: WorkerSlot, call: Call): void {
    if (closed || slot.broken) lose(call, 'worker_lost');
    else slot.batches.enqueue(call);
  }

  /** Forgets an instance's place; returns the module to evict from its worker, if it was the last user. */
  function detach(instance: PooledInstance): string | null {
    instance.live = false;
    const slot = slots[instance.workerId]!;
    slot.instances.delete(instance);
    return slot.modules.release(instance.sha256);
  }

  /** After a failure the worker has already dropped the instance; this frees its memory and maybe its module. */
  function discard(instance: PooledInstance): void {
    if (!instance.live) return;
    ledger.set(instance, 0);
    const dropModule = detach(instance);
    if (dropModule === null) return;
    enqueue(slots[instance.workerId]!, { op: 'release', req: { op: 'release', agent: instance.index, dropModule }, owner: instance, resolve: () => undefined });
  }

  /** Fuel used up or a timeout overrun: the agent's next instance goes to the isolated lane. */
  function noteRunaway(instance: PooledInstance, failure: ExecutionFailure): void {
    if (failure === 'fuel_exhausted' || failure === 'timeout') lanes.markRunaway(instance.label);
  }

  function failInstantiate(call: InstantiateCall, failure: ExecutionFailure, message: string): void {
    count(failure);
    noteRunaway(call.owner, failure);
    discard(call.owner);
    call.reject(new SvcError(INSTANTIATE_ERRORS[failure], message, { agent_id: call.owner.label, reason: failure }));
  }

  function executed(call: ExecuteCall, result: ExecutionResult): void {
    const next = probation?.answered(call, result.ok);
    if (next !== undefined) enqueue(slots[next.owner.workerId]!, next);
    pendingExecutions -= 1;
    counters.executions += 1;
    if (result.ok) {
      ledger.set(call.owner, result.memoryBytes);
      return call.onResult(result);
    }
    count(result.failure);
    noteRunaway(call.owner, result.failure);
    discard(call.owner);
    const slice = sliced && result.failure === 'fuel_exhausted' && slots[call.owner.workerId]!.lane === 'shared';
    call.onResult(slice ? { ...result, message: 'execution slice of the shared lane used up; the agent restarts on the isolated lane' } : result);
  }

  /** Settles a call that is not an execution (those are settled from the result columns). */
  function answered(call: Call, result: WorkerResult): void {
    if (call.op === 'instantiate' && result.op === 'instantiate') {
      if (!result.ok) return failInstantiate(call, result.failure, result.message);
      counters.instantiations += 1;
      counters.instantiateNs += result.durationNs;
      ledger.set(call.owner, result.memoryBytes);
      call.owner.ready = true;
      call.resolve({ instance: call.owner, memoryBytes: result.memoryBytes, workerId: call.owner.workerId, log: result.log });
    } else if (call.op === 'snapshot' && result.op === 'snapshot') {
      if (result.ok) call.resolve(result.snapshot);
      else call.reject(new SvcError('NOT_FOUND', result.message, { agent_id: call.owner.label }));
    } else if (call.op === 'release') {
      ledger.set(call.owner, 0);
      call.resolve();
    }
  }

  function lose(call: Call, loss: Loss): void {
    switch (call.op) {
      case 'instantiate':
        return failInstantiate(call, loss, LOSS_MESSAGES[loss]);
      case 'execute':
        return executed(call, emptyResult(loss, LOSS_MESSAGES[loss]));
      case 'snapshot':
        return call.reject(new SvcError('UNAVAILABLE', LOSS_MESSAGES[loss], { agent_id: call.owner.label, reason: loss }));
      case 'release':
        ledger.set(call.owner, 0);
        return call.resolve();
    }
  }

  /**
   * A thread that dies before it ever started would die again: its place is
   * marked broken instead of respawning in a loop (`replace` false).
   */
  function loseWorker(slot: WorkerSlot, overrun: Overrun | null, replace: boolean): void {
    if (closed) return;
    counters.workersLost += 1;
    const overranCall = overrun === null ? undefined : slot.batches.unanswered(overrun.batch, overrun.index);
    const overran = overranCall?.owner;
    const hosted = [...slot.instances];
    const { calls, grants, loans: lent } = slot.batches.drain();
    calls.push(...(probation?.drain(slot.id) ?? []));
    idleWatchdog();
    watchdog.unwatch(slot.id);
    threadsOf(slot).retire(slot.thread);
    slot.instances.clear();
    slot.modules.clear();
    if (replace) {
      slot.thread = threadsOf(slot).replace(slot.id);
      watchdog.watch(slot.id, slot.thread.slot);
    } else slot.broken = true;
    // Only now is memory freed: it may place waiting instantiations, which must find the slot whole again.
    for (const grant of grants) ledger.release(grant);
    // Every instance on the thread died with it, so all its memory is free again.
    for (const instance of hosted) {
      instance.live = false;
      ledger.set(instance, 0);
    }
    for (const call of calls) lose(call, call === overranCall ? 'timeout' : 'worker_lost');
    for (const loan of lent) endLoan(loan);
    const lost = hosted.filter((instance) => instance !== overran && instance.ready);
    for (const instance of lost) instance.onLost?.(instance);
    const event: WorkerLostEvent = { workerId: slot.id, overran: overran?.label ?? null, lost: lost.map((instance) => instance.label) };
    for (const listener of listeners) listener(event);
  }

  const memoryExhausted = (label: string): SvcError =>
    new SvcError('RESOURCE_EXHAUSTED', 'wasm memory limit of the executor pool reached', { agent_id: label, reason: 'memory_limit' });
  const noWorker = (): SvcError => new SvcError('UNAVAILABLE', 'no executor worker could start', { last_error: sharedThreads.lastError() ?? isolatedThreads.lastError() ?? '' });

  /** Puts an instantiation whose memory is reserved on the worker asked for, or that of its lane with the fewest instances. */
  function place(request: PlacementRequest): void {
    const slot = lanes.pick(request.label, request.workerId);
    if (slot === undefined) {
      ledger.set({ memoryBytes: request.reserveBytes }, 0);
      return request.reject(noWorker());
    }
    const { admitted, limitPages } = request;
    nextIndex = (nextIndex + 1) | 0;
    const maxPages = Math.min(limitPages, admitted.info.memory.maximumPages);
    const instance = new PooledInstance(request.label, nextIndex, slot.id, admitted.sha256, limitPages, maxPages, request.reserveBytes, request.onLost);
    slot.instances.add(instance);
    const first = slot.modules.acquire(admitted.sha256);
    if (first) counters.modulesSent += 1;
    const req: InstantiateRequest = {
      op: 'instantiate',
      agent: instance.index,
      sha256: admitted.sha256,
      module: first ? admitted.module : null,
      globalExports: admitted.globalExports,
      startExport: admitted.info.startExport,
      memoryLimitPages: limitPages,
      snapshot: request.snapshot,
      upgrade: request.upgrade ? admitted.info.dataSegments : null,
      names: request.names,
    };
    enqueue(slot, { op: 'instantiate', req, owner: instance, resolve: request.resolve, reject: request.reject });
  }

  function refuseLater(onResult: (result: ExecutionResult) => void, failure: ExecutionFailure, message: string): void {
    count(failure);
    queueMicrotask(() => onResult(emptyResult(failure, message)));
  }

  return {
    started: () => started,

    instantiate(admitted, opts) {
      const { label } = opts;
      if (closed) return Promise.reject(new SvcError('UNAVAILABLE', 'executor pool is closed', { agent_id: label }));
      const limitPages = Math.floor(opts.memoryLimitBytes / WASM_PAGE_BYTES);
      const snapshotPages = opts.snapshot === undefined ? 0 : opts.snapshot.memory.byteLength / WASM_PAGE_BYTES;
      const reserveBytes = Math.max(admitted.info.memory.initialPages, snapshotPages) * WASM_PAGE_BYTES;
      if (reserveBytes > limitPages * WASM_PAGE_BYTES) {
        return Promise.reject(new SvcError('RESOURCE_EXHAUSTED', 'initial memory exceeds the agent memory limit', { agent_id: label, reason: 'memory_limit' }));
      }
      if (lanes.pick(label) === undefined) return Promise.reject(noWorker());
      return new Promise<Placement>((resolve, reject) => {
        const request: PlacementRequest = { label, names: opts.names ?? [label], workerId: opts.workerId, admitted, snapshot: opts.snapshot ?? null, upgrade: opts.upgrade === true, limitPages, reserveBytes, onLost: opts.onLost, resolve, reject };
        const reservation = ledger.reserve(reserveBytes, (reserved) => {
          // Gone from `waiting` when the pool closed meanwhile (and rejected it).
          if (!waiting.delete(request)) return;
          if (reserved) place(request);
          else reject(memoryExhausted(label));
        });
        if (reservation === 'reserved') place(request);
        else if (reservation === 'waiting') waiting.add(request);
        else reject(memoryExhausted(label));
      });
    },

    execute(handle, input, onResult) {
      const instance = pooled(handle);
      if (closed) return refuseLater(onResult, 'closed', 'executor pool is closed');
      if (!instance.live) return refuseLater(onResult, 'not_instantiated', `instance of ${instance.label} is gone`);
      if (pendingExecutions >= maxPending) return refuseLater(onResult, 'overloaded', 'too many executions pending');
      pendingExecutions += 1;
      const slot = slots[instance.workerId]!;
      const call: ExecuteCall = { op: 'execute', agent: instance.index, input, owner: instance, onResult };
      if (probation === undefined || slot.lane !== 'shared' || probation.admit(call)) slot.batches.enqueue(call);
    },

    snapshot(handle) {
      const instance = pooled(handle);
      if (!instance.live) return Promise.reject(new SvcError('NOT_FOUND', `instance of ${instance.label} is gone`, { agent_id: instance.label }));
      const req = { op: 'snapshot' as const, agent: instance.index };
      return new Promise<InstanceSnapshot>((resolve, reject) => enqueue(slots[instance.workerId]!, { op: 'snapshot', req, owner: instance, resolve, reject }));
    },

    release(handle) {
      const instance = pooled(handle);
      if (!instance.live) return Promise.resolve();
      // The memory stays counted until the worker has dropped the instance.
      const slot = slots[instance.workerId]!;
      const req = { op: 'release' as const, agent: instance.index, dropModule: detach(instance) };
      return new Promise<void>((resolve) => enqueue(slot, { op: 'release', req, owner: instance, resolve }));
    },

    memoryBytes: (handle) => pooled(handle).memoryBytes,
    totalMemoryBytes: () => ledger.committedBytes(),

    stats: () => poolStats({ lanes, shared: sharedThreads, isolated: isolatedThreads, ledger, waiting: waiting.size, counters, failures }),

    lendWith: (lender) => loans.lendWith(lender),

    placementOf(handle) {
      const instance = pooled(handle);
      const slot = slots[instance.workerId]!;
      return instance.live ? { workerId: slot.id, shared: slot.lane === 'shared', instances: slot.instances.size } : undefined;
    },

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
      const unplaced = [...waiting];
      waiting.clear();
      for (const request of unplaced) request.reject(new SvcError('UNAVAILABLE', 'executor pool is closed', { agent_id: request.label }));
      const drained = slots.map((slot) => slot.batches.drain());
      const calls = drained.flatMap(({ calls: inFlight }, id) => [...inFlight, ...(probation?.drain(id) ?? [])]);
      for (const call of calls) lose(call, 'worker_lost');
      for (const { loans: lent } of drained) lent.forEach(endLoan);
      await Promise.all([sharedThreads.close(), isolatedThreads.close()]);
    },
  };
}
