import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeIncoming, parseOutput, type IncomingMessage } from '../../src/sandbox/abi.js';
import { isSvcError } from '../../src/errors/svc-error.js';
import { DEFAULT_MAX_BATCH_SIZE } from '../../src/sandbox/executor-pool.js';
import type { ExecutionResult } from '../../src/sandbox/types.js';
import { MiB, PAGE, admitted, assertOk as ok, failureOf, handAdmitted, testPool as pool } from './sandbox-fixtures.js';

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
