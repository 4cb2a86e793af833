import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeIncoming, parseOutput, type IncomingMessage } from '../../src/sandbox/abi.js';
import { isSvcError } from '../../src/errors/svc-error.js';
import { DEFAULT_MAX_BATCH_SIZE } from '../../src/sandbox/executor-pool.js';
import type { ExecutionResult } from '../../src/sandbox/types.js';
import { createSimulatedClock } from '../../supervisors/index.js';
import type { InstanceHandle } from '../../src/sandbox/types.js';
import { MiB, PAGE, admitted, assertOk as ok, driveUntil, failureOf, handAdmitted, handAdmittedWat, place, testPool as pool, run } from './sandbox-fixtures.js';

const text = new TextEncoder();

test('an echo agent reads its message on fd 0 and writes it back as one line', async () => {
  const p = pool();
  try {
    const echo = await handAdmitted('agents/echo.wat');
    const placed = await p.instantiate(echo, { label: 'echo', memoryLimitBytes: MiB });
    assert.equal(placed.memoryBytes, PAGE);
    assert.equal(placed.instance.label, 'echo');
    const result = await run(p, placed.instance, text.encode('{"hello":"world"}'));
    ok(result);
    assert.deepEqual(result.stdout, ['{"hello":"world"}']);
    assert.deepEqual(result.stderr, []);
    assert.equal(result.memoryBytes, PAGE);
    assert.ok(result.durationNs > 0);
    assert.equal(p.memoryBytes(placed.instance), PAGE);
    assert.equal(p.totalMemoryBytes(), PAGE);
  } finally {
    await p.close();
  }
});

test('started() settles once every worker thread has started', async () => {
  const p = pool({ workers: 2 });
  try {
    assert.equal(p.stats().startedWorkers, 0, 'threads take time to boot');
    await p.started();
    assert.equal(p.stats().startedWorkers, 2);
  } finally {
    await p.close();
  }
});

test('started() settles when the pool closes before its threads start', async () => {
  const p = pool({ workers: 2 });
  await p.close();
  await p.started();
});

test('ABI round trip: the incoming message goes in on fd 0, the reply defaults to its sender and conversation', async () => {
  const p = pool({ workers: 1 });
  try {
    const agent = await place(p, 'agent-a', await handAdmitted('agents/counter.wat'));
    const incoming: IncomingMessage = {
      message_id: 'm-1', sender: 'client:alice', receiver: 'agent-a', message_type: 'request', conversation_id: 'c-9',
    };
    const result = await run(p, agent, encodeIncoming(incoming));
    ok(result);
    const { messages, errors } = parseOutput(result.stdout, incoming, 'agent-a');
    assert.deepEqual(errors, []);
    assert.deepEqual(messages, [{
      sender: 'agent-a', receiver: 'client:alice', message_type: 'inform', content: [101, 101], conversation_id: 'c-9', in_reply_to: 'm-1',
    }]);
  } finally {
    await p.close();
  }
});

test('a counter keeps counting after snapshot, release and instantiate-with-snapshot', async () => {
  const p = pool();
  try {
    const counter = await handAdmitted('agents/counter.wat');
    const first = await place(p, 'counter', counter);
    for (let i = 0; i < 3; i++) ok(await run(p, first));
    const snap = await p.snapshot(first);
    assert.equal(snap.memory.byteLength, PAGE);
    assert.deepEqual(snap.globals, [103]);
    await p.release(first);
    assert.equal(p.totalMemoryBytes(), 0);
    assert.equal(failureOf(await run(p, first)), 'not_instantiated', 'a released handle is refused, as a result');
    await assert.rejects(p.snapshot(first), (error: unknown) => isSvcError(error) && error.code === 'NOT_FOUND');

    const second = await place(p, 'counter', counter, { memoryLimitBytes: MiB, snapshot: snap });
    const next = await run(p, second);
    ok(next);
    assert.deepEqual(next.stdout, ['{"message_type":"inform","content":[104,104]}']);
  } finally {
    await p.close();
  }
});

test('agents spread over workers; each worker receives a module once', async () => {
  const p = pool();
  try {
    const echo = await handAdmitted('agents/echo.wat');
    const placements = await Promise.all(Array.from({ length: 10 }, (_, i) => p.instantiate(echo, { label: `a${i}`, memoryLimitBytes: MiB })));
    const perWorker = [0, 1].map((w) => placements.filter((pl) => pl.workerId === w).length);
    assert.deepEqual(perWorker, [5, 5]);
    assert.equal(p.stats().modulesSent, 2);
    assert.equal(p.stats().instances, 10);
    await Promise.all(placements.map((pl) => p.release(pl.instance)));
    assert.equal(p.stats().instances, 0);
    assert.equal(p.totalMemoryBytes(), 0);
  } finally {
    await p.close();
  }
});

test('instantiation is refused with RESOURCE_EXHAUSTED when the initial memory does not fit', async () => {
  const p = pool({ wasmMemoryLimitBytes: PAGE + PAGE / 2 });
  try {
    const echo = await handAdmitted('agents/echo.wat');
    await place(p, 'first', echo);
    await assert.rejects(place(p, 'second', echo), (error: unknown) => {
      assert.ok(isSvcError(error));
      assert.equal(error.code, 'RESOURCE_EXHAUSTED');
      assert.equal(error.metadata['reason'], 'memory_limit');
      assert.equal(error.metadata['agent_id'], 'second');
      return true;
    });
  } finally {
    await p.close();
  }
});

/**
 * Declares the largest maximum, so a batch it is in wants a large grant, but
 * grows by one page per execution only up to 8 pages: it could grow far more
 * than it does, like most agents. The budget check is the instrumenter's.
 */
const MODEST_GROWER = `(module
  (memory (export "memory") 1 1024)
  (global $fuel (export "__svc_fuel") (mut i64) (i64.const 0))
  (global $budget (export "__svc_memory_budget") (mut i32) (i32.const 0))
  (func (export "handle")
    (if (i32.and (i32.lt_u (memory.size) (i32.const 8)) (i32.ge_u (global.get $budget) (i32.const 1)))
      (then
        (if (i32.ne (memory.grow (i32.const 1)) (i32.const -1))
          (then (global.set $budget (i32.sub (global.get $budget) (i32.const 1)))))))))`;

/** Runs `handle` of each agent over and over until `stop()`; tracks the pool's largest total memory seen. */
function keepExecuting(p: ReturnType<typeof pool>, instances: InstanceHandle[]): { stop(): Promise<{ executions: number; peakBytes: number }> } {
  let running = true;
  let executions = 0;
  let peakBytes = 0;
  const chains = instances.map(async (instance) => {
    while (running) {
      ok(await run(p, instance));
      executions += 1;
      peakBytes = Math.max(peakBytes, p.totalMemoryBytes());
    }
  });
  return {
    async stop() {
      running = false;
      await Promise.all(chains);
      return { executions, peakBytes };
    },
  };
}

test('regression (10,000 deploys, ~2,000 refused): instantiations succeed while executions with growth are in flight', async () => {
  // Far above need: 616 growers of 1 page, 16 of which grow to 8 pages, take under 40 MiB.
  const limit = 256 * MiB;
  const p = pool({ wasmMemoryLimitBytes: limit });
  try {
    const grower = await handAdmittedWat(MODEST_GROWER, { maximumPages: 1024 });
    const busy = await Promise.all(Array.from({ length: 16 }, (_, i) => place(p, `busy-${i}`, grower, { memoryLimitBytes: 64 * MiB })));
    const load = keepExecuting(p, busy);
    // 64 at a time, as deploys come: later ones arrive while earlier instantiations and the executions hold grants.
    const count = 600;
    let next = 0;
    const refusals: string[] = [];
    const placed: InstanceHandle[] = [];
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        while (next < count) {
          const id = `new-${next++}`;
          await place(p, id, grower, { memoryLimitBytes: 64 * MiB }).then(
            (instance) => placed.push(instance),
            (error: unknown) => refusals.push(`${id}: ${String(error)}`),
          );
        }
      }),
    );
    const { executions, peakBytes } = await load.stop();
    assert.deepEqual(refusals.slice(0, 3), [], `${refusals.length} of ${count} instantiations refused`);
    assert.ok(executions >= busy.length * 8, `${executions} executions ran meanwhile`);
    assert.ok(peakBytes <= limit, `${peakBytes}`);
    const stats = p.stats();
    assert.equal(stats.instances, busy.length + count);
    assert.equal(stats.waitingInstantiations, 0);
    assert.equal([...busy, ...placed].reduce((sum, instance) => sum + p.memoryBytes(instance), 0), p.totalMemoryBytes());
  } finally {
    await p.close();
  }
});

test('instantiations racing memory bombs for the last headroom get it or RESOURCE_EXHAUSTED, and the limit holds', async () => {
  const limit = 4 * MiB;
  const p = pool({ wasmMemoryLimitBytes: limit });
  try {
    const bomb = await handAdmitted('hostile/memory-bomb.wat', { maximumPages: 1024 });
    const echo = await handAdmitted('agents/echo.wat');
    const bombs = await Promise.all(['bomb-0', 'bomb-1'].map((id) => place(p, id, bomb, { memoryLimitBytes: limit })));
    // A first round: the bombs grow as far as their grants let them; the next rounds race the instantiations.
    (await Promise.all(bombs.map((instance) => run(p, instance)))).forEach(ok);
    const load = keepExecuting(p, bombs);
    const outcomes: Array<PromiseSettledResult<unknown>> = [];
    for (let wave = 0; wave < 10; wave++) {
      const ids = Array.from({ length: 10 }, (_, i) => `echo-${wave}-${i}`);
      outcomes.push(...(await Promise.allSettled(ids.map((id) => place(p, id, echo)))));
    }
    const { peakBytes } = await load.stop();
    assert.ok(peakBytes <= limit, `${peakBytes}`);
    assert.ok(p.totalMemoryBytes() <= limit);
    const placed = outcomes.filter((o) => o.status === 'fulfilled').length;
    for (const o of outcomes) {
      if (o.status === 'fulfilled') continue;
      assert.ok(isSvcError(o.reason), String(o.reason));
      assert.equal(o.reason.code, 'RESOURCE_EXHAUSTED');
      assert.equal(o.reason.metadata['reason'], 'memory_limit');
    }
    assert.ok(placed < outcomes.length, 'the bombs hold most of the memory');
    assert.equal(p.stats().waitingInstantiations, 0);
  } finally {
    await p.close();
  }
});

/**
 * One worker, so two batches in flight are all its places: two spinners that
 * could grow to the pool's limit get all of the free headroom granted, and an
 * instantiation asked for then has to wait for those grants. Nothing stops
 * the spinners until the test drives the watchdog's clock.
 */
async function headroomHeldBySpinners() {
  const clock = createSimulatedClock();
  const p = pool({ workers: 1, maxBatchSize: 1, wasmMemoryLimitBytes: 4 * MiB, executionTimeoutMs: 300, clock });
  const spinner = await handAdmitted('hostile/fuel-bypass.wat', { maximumPages: 1024 });
  const echo = await handAdmitted('agents/echo.wat');
  const spinners = await Promise.all(['spin-a', 'spin-b'].map((id) => place(p, id, spinner, { memoryLimitBytes: 4 * MiB })));
  const spins: Array<Promise<ExecutionResult>> = [];
  for (const instance of spinners) {
    spins.push(run(p, instance));
    // Batches of one call: the second leaves while the first runs, so both hold a grant.
    await new Promise((resolve) => setImmediate(resolve));
  }
  return { p, clock, spins, echo };
}

test('an instantiation waits while batches in flight hold the headroom, and is placed once they are answered', async () => {
  const { p, clock, spins, echo } = await headroomHeldBySpinners();
  try {
    const placing = p.instantiate(echo, { label: 'echo', memoryLimitBytes: MiB });
    assert.equal(p.stats().waitingInstantiations, 1);
    // The watchdog ends the spinners with their worker; their grants come back and the instantiation goes to its replacement.
    const { value: results } = await driveUntil(clock, Promise.all(spins));
    assert.deepEqual(results.map(failureOf), ['timeout', 'worker_lost']);
    const placed = await placing;
    assert.equal(placed.workerId, 0);
    assert.equal(p.stats().waitingInstantiations, 0);
    ok(await run(p, placed.instance, text.encode('{}')));
    assert.equal(p.totalMemoryBytes(), PAGE);
  } finally {
    await p.close();
  }
});

test('an instantiation waiting for memory is refused with UNAVAILABLE when the pool closes', async () => {
  const { p, spins, echo } = await headroomHeldBySpinners();
  const placing = p.instantiate(echo, { label: 'echo', memoryLimitBytes: MiB });
  assert.equal(p.stats().waitingInstantiations, 1);
  const refused = assert.rejects(placing, (error: unknown) => isSvcError(error) && error.code === 'UNAVAILABLE');
  await p.close();
  await refused;
  assert.deepEqual((await Promise.all(spins)).map(failureOf), ['worker_lost', 'worker_lost']);
});

test('executions are batched per worker and answer in order', async () => {
  const p = pool();
  try {
    const echo = await handAdmitted('agents/echo.wat');
    const agents = await Promise.all(Array.from({ length: 100 }, (_, i) => place(p, `e${i}`, echo)));
    const runMany = (n: number): Promise<ExecutionResult[]> =>
      Promise.all(Array.from({ length: n }, (_, i) => run(p, agents[i % agents.length]!, text.encode(`{"n":${i}}`))));
    await runMany(5_000);
    const before = p.stats().batches;
    const results = await runMany(20_000);
    results.forEach((r, i) => {
      ok(r);
      assert.deepEqual(r.stdout, [`{"n":${i}}`]);
    });
    const batches = p.stats().batches - before;
    assert.ok(batches <= Math.ceil(results.length / DEFAULT_MAX_BATCH_SIZE) + 2, `${batches} batches for ${results.length} executions`);
  } finally {
    await p.close();
  }
});

test('a worker is sent one batch at a time, and a second only when a whole batch waits', async () => {
  const clock = createSimulatedClock();
  const p = pool({ workers: 1, maxBatchSize: 3, executionTimeoutMs: 300, clock });
  const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
  try {
    const spinner = await place(p, 'spin', await handAdmitted('hostile/fuel-bypass.wat'));
    const echo = await place(p, 'echo', await handAdmitted('agents/echo.wat'));
    const before = p.stats().batches;
    const spin = run(p, spinner);
    await turn();
    assert.equal(p.stats().batches, before + 1);
    const echoes: Array<Promise<ExecutionResult>> = [];
    for (let i = 0; i < 3; i++) {
      assert.equal(p.stats().batches, before + 1, `${i} calls wait for the batch in flight`);
      echoes.push(run(p, echo, text.encode(`{"n":${i}}`)));
      await turn();
    }
    assert.equal(p.stats().batches, before + 2, 'a whole batch leaves while the first runs');
    echoes.push(run(p, echo, text.encode('{"n":3}')));
    await turn();
    assert.equal(p.stats().batches, before + 2, 'two batches in flight at most');
    assert.equal(p.stats().pendingCalls, 5);
    // The spinner ends with its worker, and the calls behind it with them: none is left unanswered.
    assert.equal(failureOf((await driveUntil(clock, spin)).value), 'timeout');
    assert.deepEqual((await Promise.all(echoes)).map(failureOf), ['worker_lost', 'worker_lost', 'worker_lost', 'worker_lost']);
    assert.equal(p.stats().pendingCalls, 0);
  } finally {
    await p.close();
  }
});

test('the watchdog ticks only while a batch is in flight: an idle pool holds no timer, so its clock can jump days', async () => {
  const clock = createSimulatedClock();
  const p = pool({ workers: 1, executionTimeoutMs: 300, clock });
  try {
    const echo = await place(p, 'echo', await handAdmitted('agents/echo.wat'));
    assert.equal(clock.pendingTimers(), 0, 'idle after the instantiation');
    const answer = run(p, echo, text.encode('{"n":1}'));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(clock.pendingTimers(), 1, 'the watchdog watches the batch in flight');
    assert.equal(failureOf(await answer), null);
    assert.equal(clock.pendingTimers(), 0, 'idle again once it is answered');
    clock.increment(8 * 24 * 3_600_000);
    assert.equal(failureOf(await run(p, echo, text.encode('{"n":2}'))), null, 'and it still runs calls after the jump');
  } finally {
    await p.close();
  }
});

test('an execution past maxPendingExecutions is refused as a result, not a rejection, and never synchronously', async () => {
  const clock = createSimulatedClock();
  const p = pool({ workers: 1, maxPendingExecutions: 1, clock, executionTimeoutMs: 300 });
  try {
    const spinner = await place(p, 'spin', await handAdmitted('hostile/fuel-bypass.wat'));
    const echo = await place(p, 'echo', await handAdmitted('agents/echo.wat'));
    const spin = run(p, spinner);
    let answered: ExecutionResult | undefined;
    p.execute(echo, text.encode('{}'), (result) => (answered = result));
    assert.equal(answered, undefined, 'not answered inside execute');
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(answered === undefined ? null : failureOf(answered), 'overloaded');
    assert.equal(failureOf((await driveUntil(clock, spin)).value), 'timeout');
    await p.close();
    assert.equal(failureOf(await run(p, echo)), 'closed');
  } finally {
    await p.close();
  }
});

test('through real admission: a counter keeps its memory and globals of every type across a snapshot', async () => {
  const p = pool();
  try {
    const counter = await admitted('agents/plain-counter.wat');
    assert.equal(counter.globalExports.length, 3);
    const first = await place(p, 'counter', counter);
    for (let i = 0; i < 3; i++) ok(await run(p, first));
    const snap = await p.snapshot(first);
    assert.deepEqual(snap.globals, [103, 3n << 32n, 0.125]);
    await p.release(first);
    const second = await place(p, 'counter', counter, { memoryLimitBytes: MiB, snapshot: snap });
    const next = await run(p, second);
    ok(next);
    assert.deepEqual(next.stdout, ['{"message_type":"inform","content":[104,104]}']);
    assert.ok(next.fuelUsed > 0n, 'instrumented code burns fuel');
    assert.deepEqual((await p.snapshot(second)).globals, [104, 4n << 32n, 0.0625]);
  } finally {
    await p.close();
  }
});
