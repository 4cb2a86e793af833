import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeIncoming, parseOutput, type IncomingMessage } from '../../src/sandbox/abi.js';
import { isSvcError } from '../../src/errors/svc-error.js';
import { DEFAULT_MAX_BATCH_SIZE } from '../../src/sandbox/executor-pool.js';
import type { AdmittedModule, ExecutionResult } from '../../src/sandbox/types.js';
import { MiB, PAGE, admitted, assertOk as ok, failureOf, handAdmitted, handAdmittedWat, testPool as pool } from './sandbox-fixtures.js';

const text = new TextEncoder();

test('an echo agent reads its message on fd 0 and writes it back as one line', async () => {
  const p = pool();
  try {
    const echo = await handAdmitted('agents/echo.wat');
    const placed = await p.instantiate('echo', echo, { memoryLimitBytes: MiB });
    assert.equal(placed.memoryBytes, PAGE);
    const result = await p.execute('echo', text.encode('{"hello":"world"}'));
    ok(result);
    assert.deepEqual(result.stdout, ['{"hello":"world"}']);
    assert.deepEqual(result.stderr, []);
    assert.equal(result.memoryBytes, PAGE);
    assert.ok(result.durationNs > 0);
    assert.equal(p.memoryBytes('echo'), PAGE);
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
    await p.instantiate('agent-a', await handAdmitted('agents/counter.wat'), { memoryLimitBytes: MiB });
    const incoming: IncomingMessage = {
      message_id: 'm-1', sender: 'client:alice', receiver: 'agent-a', message_type: 'request', conversation_id: 'c-9',
    };
    const result = await p.execute('agent-a', encodeIncoming(incoming));
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
    await p.instantiate('counter', counter, { memoryLimitBytes: MiB });
    for (let i = 0; i < 3; i++) ok(await p.execute('counter', new Uint8Array()));
    const snap = await p.snapshot('counter');
    assert.equal(snap.memory.byteLength, PAGE);
    assert.deepEqual(snap.globals, [103]);
    await p.release('counter');
    assert.equal(p.totalMemoryBytes(), 0);
    assert.equal(failureOf(await p.execute('counter', new Uint8Array())), 'not_instantiated');

    await p.instantiate('counter', counter, { memoryLimitBytes: MiB, snapshot: snap });
    const next = await p.execute('counter', new Uint8Array());
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
    const placements = await Promise.all(Array.from({ length: 10 }, (_, i) => p.instantiate(`a${i}`, echo, { memoryLimitBytes: MiB })));
    const perWorker = [0, 1].map((w) => placements.filter((pl) => pl.workerId === w).length);
    assert.deepEqual(perWorker, [5, 5]);
    assert.equal(p.stats().modulesSent, 2);
    assert.equal(p.stats().instances, 10);
    await Promise.all(Array.from({ length: 10 }, (_, i) => p.release(`a${i}`)));
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
    await p.instantiate('first', echo, { memoryLimitBytes: MiB });
    await assert.rejects(p.instantiate('second', echo, { memoryLimitBytes: MiB }), (error: unknown) => {
      assert.ok(isSvcError(error));
      assert.equal(error.code, 'RESOURCE_EXHAUSTED');
      assert.equal(error.metadata['reason'], 'memory_limit');
      return true;
    });
    await assert.rejects(p.instantiate('first', echo, { memoryLimitBytes: MiB }), /already has an instance/);
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
function keepExecuting(p: ReturnType<typeof pool>, ids: string[]): { stop(): Promise<{ executions: number; peakBytes: number }> } {
  let running = true;
  let executions = 0;
  let peakBytes = 0;
  const chains = ids.map(async (id) => {
    while (running) {
      ok(await p.execute(id, new Uint8Array()));
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
    const busy = Array.from({ length: 16 }, (_, i) => `busy-${i}`);
    await Promise.all(busy.map((id) => p.instantiate(id, grower, { memoryLimitBytes: 64 * MiB })));
    const load = keepExecuting(p, busy);
    // 64 at a time, as deploys come: later ones arrive while earlier instantiations and the executions hold grants.
    const count = 600;
    let next = 0;
    const refusals: string[] = [];
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        while (next < count) {
          const id = `new-${next++}`;
          await p.instantiate(id, grower, { memoryLimitBytes: 64 * MiB }).catch((error: unknown) => refusals.push(`${id}: ${String(error)}`));
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
    const ids = [...busy, ...Array.from({ length: count }, (_, i) => `new-${i}`)];
    assert.equal(ids.reduce((sum, id) => sum + p.memoryBytes(id), 0), p.totalMemoryBytes());
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
    const bombs = ['bomb-0', 'bomb-1'];
    await Promise.all(bombs.map((id) => p.instantiate(id, bomb, { memoryLimitBytes: limit })));
    // A first round: the bombs grow as far as their grants let them; the next rounds race the instantiations.
    (await Promise.all(bombs.map((id) => p.execute(id, new Uint8Array())))).forEach(ok);
    const load = keepExecuting(p, bombs);
    const outcomes: Array<PromiseSettledResult<unknown>> = [];
    for (let wave = 0; wave < 10; wave++) {
      const ids = Array.from({ length: 10 }, (_, i) => `echo-${wave}-${i}`);
      outcomes.push(...(await Promise.allSettled(ids.map((id) => p.instantiate(id, echo, { memoryLimitBytes: MiB })))));
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
 * instantiation asked for then has to wait for those grants.
 */
async function headroomHeldBySpinners(): Promise<{ p: ReturnType<typeof pool>; spins: Array<Promise<ExecutionResult>>; echo: AdmittedModule }> {
  const p = pool({ workers: 1, maxBatchSize: 1, wasmMemoryLimitBytes: 4 * MiB, executionTimeoutMs: 300 });
  const spinner = await handAdmitted('hostile/fuel-bypass.wat', { maximumPages: 1024 });
  const echo = await handAdmitted('agents/echo.wat');
  await Promise.all(['spin-a', 'spin-b'].map((id) => p.instantiate(id, spinner, { memoryLimitBytes: 4 * MiB })));
  const spins: Array<Promise<ExecutionResult>> = [];
  for (const id of ['spin-a', 'spin-b']) {
    spins.push(p.execute(id, new Uint8Array()));
    // Batches of one call: the second leaves while the first runs, so both hold a grant.
    await new Promise((resolve) => setImmediate(resolve));
  }
  return { p, spins, echo };
}

test('an instantiation waits while batches in flight hold the headroom, and is placed once they are answered', async () => {
  const { p, spins, echo } = await headroomHeldBySpinners();
  try {
    const placing = p.instantiate('echo', echo, { memoryLimitBytes: MiB });
    assert.equal(p.stats().waitingInstantiations, 1);
    await assert.rejects(p.instantiate('echo', echo, { memoryLimitBytes: MiB }), /already has an instance/);
    // The watchdog ends the spinners with their worker; their grants come back and the instantiation goes to its replacement.
    assert.deepEqual((await Promise.all(spins)).map(failureOf), ['timeout', 'worker_lost']);
    const placed = await placing;
    assert.equal(placed.workerId, 0);
    assert.equal(p.stats().waitingInstantiations, 0);
    ok(await p.execute('echo', text.encode('{}')));
    assert.equal(p.totalMemoryBytes(), PAGE);
  } finally {
    await p.close();
  }
});

test('an instantiation waiting for memory is refused with UNAVAILABLE when the pool closes', async () => {
  const { p, spins, echo } = await headroomHeldBySpinners();
  const placing = p.instantiate('echo', echo, { memoryLimitBytes: MiB });
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
    const agents = Array.from({ length: 100 }, (_, i) => `e${i}`);
    await Promise.all(agents.map((id) => p.instantiate(id, echo, { memoryLimitBytes: MiB })));
    const run = (n: number): Promise<ExecutionResult[]> =>
      Promise.all(Array.from({ length: n }, (_, i) => p.execute(agents[i % agents.length]!, text.encode(`{"n":${i}}`))));
    await run(5_000);
    const before = p.stats().batches;
    const started = performance.now();
    const results = await run(20_000);
    const seconds = (performance.now() - started) / 1000;
    results.forEach((r, i) => {
      ok(r);
      assert.deepEqual(r.stdout, [`{"n":${i}}`]);
    });
    const batches = p.stats().batches - before;
    assert.ok(batches <= Math.ceil(results.length / DEFAULT_MAX_BATCH_SIZE) + 2, `${batches} batches for ${results.length} executions`);
    console.log(`# ${results.length} executions in ${batches} batches: ${Math.round(results.length / seconds)} msg/s`);
  } finally {
    await p.close();
  }
});

test('a worker is sent one batch at a time, and a second only when a whole batch waits', async () => {
  const p = pool({ workers: 1, maxBatchSize: 3, executionTimeoutMs: 300 });
  const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
  try {
    const spinner = await handAdmitted('hostile/fuel-bypass.wat');
    const echo = await handAdmitted('agents/echo.wat');
    await p.instantiate('spin', spinner, { memoryLimitBytes: MiB });
    await p.instantiate('echo', echo, { memoryLimitBytes: MiB });
    const before = p.stats().batches;
    const spin = p.execute('spin', new Uint8Array());
    await turn();
    assert.equal(p.stats().batches, before + 1);
    const echoes: Array<Promise<ExecutionResult>> = [];
    for (let i = 0; i < 3; i++) {
      assert.equal(p.stats().batches, before + 1, `${i} calls wait for the batch in flight`);
      echoes.push(p.execute('echo', text.encode(`{"n":${i}}`)));
      await turn();
    }
    assert.equal(p.stats().batches, before + 2, 'a whole batch leaves while the first runs');
    echoes.push(p.execute('echo', text.encode('{"n":3}')));
    await turn();
    assert.equal(p.stats().batches, before + 2, 'two batches in flight at most');
    assert.equal(p.stats().pendingCalls, 5);
    // The spinner ends with its worker, and the calls behind it with them: none is left unanswered.
    assert.equal(failureOf(await spin), 'timeout');
    assert.deepEqual((await Promise.all(echoes)).map(failureOf), ['worker_lost', 'worker_lost', 'worker_lost', 'worker_lost']);
    assert.equal(p.stats().pendingCalls, 0);
  } finally {
    await p.close();
  }
});

test('instantiation from a cached module takes tens of microseconds inside the worker', async () => {
  const p = pool();
  try {
    const echo = await handAdmitted('agents/echo.wat');
    const n = 500;
    await Promise.all(Array.from({ length: n }, (_, i) => p.instantiate(`i${i}`, echo, { memoryLimitBytes: MiB })));
    const { meanInstantiateNs, instances } = p.stats();
    assert.equal(instances, n);
    console.log(`# mean instantiate in worker: ${(meanInstantiateNs / 1000).toFixed(1)} µs`);
    assert.ok(meanInstantiateNs < 1_000_000, `${meanInstantiateNs} ns`);
  } finally {
    await p.close();
  }
});

test('through real admission: a counter keeps its memory and globals of every type across a snapshot', async () => {
  const p = pool();
  try {
    const counter = await admitted('agents/plain-counter.wat');
    assert.equal(counter.globalExports.length, 3);
    await p.instantiate('counter', counter, { memoryLimitBytes: MiB });
    for (let i = 0; i < 3; i++) ok(await p.execute('counter', new Uint8Array()));
    const snap = await p.snapshot('counter');
    assert.deepEqual(snap.globals, [103, 3n << 32n, 0.125]);
    await p.release('counter');
    await p.instantiate('counter', counter, { memoryLimitBytes: MiB, snapshot: snap });
    const next = await p.execute('counter', new Uint8Array());
    ok(next);
    assert.deepEqual(next.stdout, ['{"message_type":"inform","content":[104,104]}']);
    assert.ok(next.fuelUsed > 0n, 'instrumented code burns fuel');
    assert.deepEqual((await p.snapshot('counter')).globals, [104, 4n << 32n, 0.0625]);
  } finally {
    await p.close();
  }
});
