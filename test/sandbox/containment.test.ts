/**
 * The hostile corpus (test/fixtures/hostile): each module fails within its
 * budget with the right failure, the other agents of the pool keep answering,
 * the process survives and the pool's memory stays bounded.
 *
 * The watchdog runs on a simulated clock: in the tests that do not drive it,
 * only fuel and the shim's caps can stop a run, and in those that do, it is
 * stopped at its timeout on that clock, never before. How long the watchdog
 * takes in real time is a benchmark (`npm run bench -- watchdog`).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fstatSync } from 'node:fs';
import { createSimulatedClock, type SimulatedClock } from '../../supervisors/index.js';
import { isSvcError } from '../../src/errors/svc-error.js';
import type { ExecutorPool, WorkerLostEvent } from '../../src/sandbox/executor-pool.js';
import type { ExecutionResult, InstanceHandle } from '../../src/sandbox/types.js';
import { MiB, PAGE, admitted, assertOk, driveUntil, failureOf, handAdmitted, place, run, testPool } from './sandbox-fixtures.js';

const POOL_LIMIT = 16 * MiB;
const TIMEOUT_MS = 400;
const text = new TextEncoder();

function hostilePool(clock: SimulatedClock = createSimulatedClock(), spareWorkers = 0): ExecutorPool {
  return testPool({
    spareWorkers,
    wasmMemoryLimitBytes: POOL_LIMIT,
    fuelPerExecution: 5_000_000n,
    executionTimeoutMs: TIMEOUT_MS,
    startupTimeoutMs: TIMEOUT_MS,
    outputLimits: { maxOutputBytes: 4096, maxOutputMessages: 10, maxLogBytes: 4096 },
    clock,
  });
}

/** Two echo agents, one per worker (placement is least-loaded, so they land on workers 0 and 1). */
async function addBystanders(pool: ExecutorPool): Promise<InstanceHandle[]> {
  const echo = await handAdmitted('agents/echo.wat');
  const placed = await Promise.all(['bystander-0', 'bystander-1'].map((id) => pool.instantiate(echo, { label: id, memoryLimitBytes: MiB })));
  assert.deepEqual(placed.map((p) => p.workerId).sort(), [0, 1]);
  return placed.sort((a, b) => a.workerId - b.workerId).map((p) => p.instance);
}

async function assertAnswering(pool: ExecutorPool, agents: InstanceHandle[]): Promise<void> {
  for (const agent of agents) {
    const result = await run(pool, agent, text.encode(`{"to":"${agent.label}"}`));
    assertOk(result);
    assert.deepEqual(result.stdout, [`{"to":"${agent.label}"}`]);
  }
}

/** Runs one hostile module once, then checks the aftermath every case shares. */
async function runHostile(file: string, input = '', memoryLimitBytes = MiB): Promise<ExecutionResult> {
  const pool = hostilePool();
  try {
    const bystanders = await addBystanders(pool);
    const hostile = await place(pool, 'hostile', await handAdmitted(`hostile/${file}`, { maximumPages: 1024 }), { memoryLimitBytes });
    const result = await run(pool, hostile, text.encode(input));
    await assertAnswering(pool, bystanders);
    if (!result.ok) assert.equal(failureOf(await run(pool, hostile, text.encode(input))), 'not_instantiated');
    assert.ok(pool.totalMemoryBytes() <= POOL_LIMIT);
    assert.equal(pool.stats().workersLost, 0);
    return result;
  } finally {
    await pool.close();
  }
}

test('an infinite loop is stopped by fuel: fuel_exhausted, with the watchdog standing still', async () => {
  const result = await runHostile('infinite-loop.wat');
  assert.equal(failureOf(result), 'fuel_exhausted');
  assert.ok(result.fuelUsed > 5_000_000n);
});

test('unbounded recursion overflows the stack and traps', async () => {
  const result = await runHostile('recursion.wat');
  assert.equal(failureOf(result), 'trap');
  assert.match(result.ok ? '' : result.message, /call stack/i);
});

test('a memory bomb gets -1 from memory.grow at its limit and stays bounded', async () => {
  const result = await runHostile('memory-bomb.wat', '', 4 * MiB);
  assertOk(result);
  assert.ok(result.memoryBytes <= 4 * MiB, `${result.memoryBytes}`);
  assert.ok(result.memoryBytes > PAGE, 'it did grow');
});

test('memory bombs together never pass the pool limit', async () => {
  const pool = testPool({ wasmMemoryLimitBytes: 2 * MiB });
  try {
    const bomb = await handAdmitted('hostile/memory-bomb.wat', { maximumPages: 1024 });
    const bombs = await Promise.all(['bomb-0', 'bomb-1', 'bomb-2'].map((id) => place(pool, id, bomb, { memoryLimitBytes: 4 * MiB })));
    for (let round = 0; round < 3; round++) {
      const results = await Promise.all(bombs.map((instance) => run(pool, instance)));
      results.forEach(assertOk);
      assert.ok(pool.totalMemoryBytes() <= 2 * MiB, `${pool.totalMemoryBytes()}`);
    }
    const total = bombs.reduce((sum, instance) => sum + pool.memoryBytes(instance), 0);
    assert.equal(total, pool.totalMemoryBytes());
    assert.ok(total > MiB, `the bombs took most of the headroom (${total})`);
  } finally {
    await pool.close();
  }
});

for (const [mode, cap] of [['L', /output messages/], ['B', /output bytes/], ['E', /log bytes/]] as const) {
  test(`an output flood (${mode}) fails with output_limit at the cap`, async () => {
    const result = await runHostile('output-flood.wat', mode);
    assert.equal(failureOf(result), 'output_limit');
    assert.match(result.ok ? '' : result.message, cap);
    assert.ok(result.stdout.length <= 10);
  });
}

test('a start function that never returns is stopped by fuel', async () => {
  const pool = hostilePool();
  try {
    const bystanders = await addBystanders(pool);
    await assert.rejects(place(pool, 'hostile', await handAdmitted('hostile/start-never-returns.wat')), (error: unknown) => {
      assert.ok(isSvcError(error));
      assert.equal(error.code, 'INVALID_MODULE');
      assert.equal(error.metadata['reason'], 'fuel_exhausted');
      return true;
    });
    await assertAnswering(pool, bystanders);
    assert.equal(pool.stats().instances, 2);
    assert.equal(pool.totalMemoryBytes(), 2 * PAGE);
  } finally {
    await pool.close();
  }
});

for (const file of ['start-spin.wat', 'start-section-spin.wat']) {
  test(`a start that spins without fuel (${file}) is stopped by the watchdog at the startup timeout`, async () => {
    const clock = createSimulatedClock();
    const pool = hostilePool(clock);
    try {
      const bystanders = await addBystanders(pool);
      const events: WorkerLostEvent[] = [];
      pool.on('workerLost', (event) => events.push(event));
      const module = await handAdmitted(`hostile/${file}`, { hasStartSection: file === 'start-section-spin.wat' });
      const refused = pool.instantiate(module, { label: 'hostile', memoryLimitBytes: MiB }).catch((error: unknown) => error);
      const { value: error, drivenMs } = await driveUntil(clock, refused);
      assert.ok(isSvcError(error), String(error));
      assert.equal(error.code, 'DEADLINE_EXCEEDED');
      assert.equal(error.metadata['reason'], 'timeout');
      assert.ok(drivenMs > TIMEOUT_MS, `stopped after ${drivenMs} ms of clock time`);
      // Placement put it beside bystander-0 on worker 0, which died with it.
      assert.deepEqual(events, [{ workerId: 0, overran: 'hostile', lost: ['bystander-0'] }]);
      await assertAnswering(pool, [bystanders[1]!]);
      assert.equal(failureOf(await run(pool, bystanders[0]!)), 'not_instantiated');
      assert.equal(pool.totalMemoryBytes(), PAGE);
    } finally {
      await pool.close();
    }
  });
}

test('fd_close(1) and fd_close(2) close them for that instance only; the server keeps its stdout', async () => {
  const pool = hostilePool();
  try {
    const bystanders = await addBystanders(pool);
    const hostile = await place(pool, 'hostile', await handAdmitted('hostile/close-stdio.wat'));
    const result = await run(pool, hostile);
    assertOk(result);
    assert.deepEqual(result.stdout, []);
    const errnos = new Int32Array((await pool.snapshot(hostile)).memory.buffer, 1024, 6);
    assert.deepEqual([...errnos], [0, 0, 8, 8, 8, 8]);
    // Again: the descriptors stay closed for this instance, so closing them fails now.
    assertOk(await run(pool, hostile));
    const again = new Int32Array((await pool.snapshot(hostile)).memory.buffer, 1024, 2);
    assert.deepEqual([...again], [8, 8]);
    assert.ok(fstatSync(1) !== undefined && fstatSync(2) !== undefined);
    assert.equal(process.stdout.write(''), true);
    await assertAnswering(pool, bystanders);
  } finally {
    await pool.close();
  }
});

test('out-of-bounds iovecs and pointers get EFAULT, never a host exception', async () => {
  const pool = hostilePool();
  try {
    const bystanders = await addBystanders(pool);
    const hostile = await place(pool, 'hostile', await handAdmitted('hostile/bad-iovec.wat'));
    const result = await run(pool, hostile, text.encode('{}'));
    assertOk(result);
    assert.deepEqual(result.stdout, ['{"message_type":"inform"}']);
    const errnos = new Int32Array((await pool.snapshot(hostile)).memory.buffer, 1024, 8);
    assert.deepEqual([...errnos], [21, 21, 21, 21, 21, 21, 21, 8]);
    await assertAnswering(pool, bystanders);
  } finally {
    await pool.close();
  }
});

test('a spin that bypasses fuel is stopped by the watchdog; the worker respawns, its neighbour is told, and the event names them', async () => {
  const clock = createSimulatedClock();
  const pool = hostilePool(clock, 1);
  try {
    const echo = await handAdmitted('agents/echo.wat');
    const lost: string[] = [];
    const onLost = (instance: InstanceHandle) => lost.push(instance.label);
    // Least-loaded placement: spinner on worker 0, other on worker 1, neighbour on worker 0.
    const spinner = await pool.instantiate(await handAdmitted('hostile/fuel-bypass.wat'), { label: 'spinner', memoryLimitBytes: MiB, onLost });
    const other = await pool.instantiate(echo, { label: 'other', memoryLimitBytes: MiB, onLost });
    const neighbour = await pool.instantiate(echo, { label: 'neighbour', memoryLimitBytes: MiB, onLost });
    assert.deepEqual([spinner.workerId, other.workerId, neighbour.workerId], [0, 1, 0]);
    const events: WorkerLostEvent[] = [];
    pool.on('workerLost', (event) => events.push(event));

    const spinning = run(pool, spinner.instance);
    const queuedBehind = run(pool, neighbour.instance, text.encode('{}'));
    // The other worker keeps answering while worker 0 spins.
    for (let i = 0; i < 5; i++) await assertAnswering(pool, [other.instance]);
    const { value: result, drivenMs } = await driveUntil(clock, spinning);
    assert.equal(failureOf(result), 'timeout');
    assert.ok(drivenMs > TIMEOUT_MS, `stopped after ${drivenMs} ms of clock time`);
    assert.equal(failureOf(await queuedBehind), 'worker_lost');
    assert.deepEqual(events, [{ workerId: 0, overran: 'spinner', lost: ['neighbour'] }]);
    assert.deepEqual(lost, ['neighbour'], 'the overrunning instance learns from its own call');

    const stats = pool.stats();
    assert.equal(stats.workersLost, 1);
    assert.equal(stats.instances, 1);
    assert.equal(pool.totalMemoryBytes(), PAGE);
    // The replacement was the warm spare; a new instance lands on the respawned worker 0 and answers.
    const again = await pool.instantiate(echo, { label: 'neighbour', memoryLimitBytes: MiB });
    assert.equal(again.workerId, 0);
    await assertAnswering(pool, [again.instance, other.instance]);
  } finally {
    await pool.close();
  }
});

test('through real admission: instrumented fuel stops a plain loop, the budget bounds a plain memory bomb, recursion traps', async () => {
  const pool = hostilePool();
  try {
    const bystanders = await addBystanders(pool);
    const instances = [
      await place(pool, 'spin', await admitted('hostile/plain-spin.wat')),
      await place(pool, 'bomb', await admitted('hostile/plain-memory-bomb.wat'), { memoryLimitBytes: 2 * MiB }),
      await place(pool, 'deep', await admitted('hostile/plain-recursion.wat')),
    ];
    const [spin, bomb, deep] = await Promise.all(instances.map((instance) => run(pool, instance)));
    assert.equal(failureOf(spin!), 'fuel_exhausted');
    assertOk(bomb!);
    assert.equal(bomb.memoryBytes, 2 * MiB);
    assert.equal(failureOf(deep!), 'trap');
    await assertAnswering(pool, bystanders);
    assert.equal(pool.totalMemoryBytes(), 2 * PAGE + 2 * MiB);
  } finally {
    await pool.close();
  }
});

test('through real admission: a start section runs after instantiation under the memory budget, like _initialize', async () => {
  // 64 MiB: a batch's grant, an even share of the free headroom, leaves room for 100 pages.
  const pool = testPool();
  try {
    const bystanders = await addBystanders(pool);
    const module = await admitted('hostile/plain-start-section-grow.wat');
    assert.equal(module.info.hasStartSection, true);
    const small = await pool.instantiate(module, { label: 'grower', memoryLimitBytes: MiB });
    assert.equal(small.memoryBytes, PAGE, 'memory.grow past the agent limit got -1');
    const large = await pool.instantiate(module, { label: 'grower', memoryLimitBytes: 8 * MiB });
    assert.equal(large.memoryBytes, 101 * PAGE);
    assert.equal(pool.totalMemoryBytes(), 2 * PAGE + PAGE + 101 * PAGE);
    await assertAnswering(pool, bystanders);
  } finally {
    await pool.close();
  }
});

test('regression (issue 41): a start section that spins runs out of fuel and says so, not trap', async () => {
  const pool = hostilePool();
  try {
    await assert.rejects(pool.instantiate(await admitted('hostile/plain-start-section-spin.wat'), { label: 'spinner', memoryLimitBytes: MiB }), (error: unknown) => {
      assert.ok(isSvcError(error));
      assert.equal(error.code, 'INVALID_MODULE');
      assert.equal(error.metadata['reason'], 'fuel_exhausted');
      return true;
    });
  } finally {
    await pool.close();
  }
});
