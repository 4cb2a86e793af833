/**
 * The hostile corpus (test/fixtures/hostile): each module fails within its
 * budget with the right failure, the other agents of the pool keep answering,
 * the process survives and the pool's memory stays bounded.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fstatSync } from 'node:fs';
import { isSvcError } from '../../src/errors/svc-error.js';
import type { ExecutorPool, WorkerLostEvent } from '../../src/sandbox/executor-pool.js';
import type { ExecutionResult } from '../../src/sandbox/types.js';
import { MiB, PAGE, admitted, assertOk, failureOf, handAdmitted, testPool } from './sandbox-fixtures.js';

const POOL_LIMIT = 16 * MiB;
const TIMEOUT_MS = 400;
/** The watchdog checks every 10 ms and terminate() takes a few; the rest is postMessage and scheduling. */
const WATCHDOG_SLACK_MS = 50;
const text = new TextEncoder();

function hostilePool(): ExecutorPool {
  return testPool({
    wasmMemoryLimitBytes: POOL_LIMIT,
    fuelPerExecution: 5_000_000n,
    executionTimeoutMs: TIMEOUT_MS,
    startupTimeoutMs: TIMEOUT_MS,
    outputLimits: { maxOutputBytes: 4096, maxOutputMessages: 10, maxLogBytes: 4096 },
  });
}

/** Two echo agents, one per worker (placement is least-loaded, so they land on workers 0 and 1). */
async function addBystanders(pool: ExecutorPool): Promise<string[]> {
  const echo = await handAdmitted('agents/echo.wat');
  const placed = await Promise.all(['bystander-0', 'bystander-1'].map((id) => pool.instantiate(id, echo, { memoryLimitBytes: MiB })));
  assert.deepEqual(placed.map((p) => p.workerId).sort(), [0, 1]);
  return ['bystander-0', 'bystander-1'];
}

async function assertAnswering(pool: ExecutorPool, agents: string[]): Promise<void> {
  for (const id of agents) {
    const result = await pool.execute(id, text.encode(`{"to":"${id}"}`));
    assertOk(result);
    assert.deepEqual(result.stdout, [`{"to":"${id}"}`]);
  }
}

/** Runs one hostile module once, then checks the aftermath every case shares. */
async function runHostile(file: string, input = '', memoryLimitBytes = MiB): Promise<{ result: ExecutionResult; wallMs: number }> {
  const pool = hostilePool();
  try {
    const bystanders = await addBystanders(pool);
    await pool.instantiate('hostile', await handAdmitted(`hostile/${file}`, { maximumPages: 1024 }), { memoryLimitBytes });
    const started = performance.now();
    const result = await pool.execute('hostile', text.encode(input));
    const wallMs = performance.now() - started;
    await assertAnswering(pool, bystanders);
    if (!result.ok) assert.equal(failureOf(await pool.execute('hostile', text.encode(input))), 'not_instantiated');
    assert.ok(pool.totalMemoryBytes() <= POOL_LIMIT);
    assert.equal(pool.stats().workersLost, 0);
    return { result, wallMs };
  } finally {
    await pool.close();
  }
}

test('an infinite loop is stopped by fuel: fuel_exhausted, well before the watchdog', async () => {
  const { result, wallMs } = await runHostile('infinite-loop.wat');
  assert.equal(failureOf(result), 'fuel_exhausted');
  assert.ok(result.fuelUsed > 5_000_000n);
  assert.ok(wallMs < TIMEOUT_MS, `${wallMs} ms`);
});

test('unbounded recursion overflows the stack and traps', async () => {
  const { result } = await runHostile('recursion.wat');
  assert.equal(failureOf(result), 'trap');
  assert.match(result.ok ? '' : result.message, /call stack/i);
});

test('a memory bomb gets -1 from memory.grow at its limit and stays bounded', async () => {
  const { result } = await runHostile('memory-bomb.wat', '', 4 * MiB);
  assertOk(result);
  assert.ok(result.memoryBytes <= 4 * MiB, `${result.memoryBytes}`);
  assert.ok(result.memoryBytes > PAGE, 'it did grow');
});

test('memory bombs together never pass the pool limit', async () => {
  const pool = testPool({ wasmMemoryLimitBytes: 2 * MiB });
  try {
    const bomb = await handAdmitted('hostile/memory-bomb.wat', { maximumPages: 1024 });
    const ids = ['bomb-0', 'bomb-1', 'bomb-2'];
    await Promise.all(ids.map((id) => pool.instantiate(id, bomb, { memoryLimitBytes: 4 * MiB })));
    for (let round = 0; round < 3; round++) {
      const results = await Promise.all(ids.map((id) => pool.execute(id, new Uint8Array())));
      results.forEach(assertOk);
      assert.ok(pool.totalMemoryBytes() <= 2 * MiB, `${pool.totalMemoryBytes()}`);
    }
    const total = ids.reduce((sum, id) => sum + pool.memoryBytes(id), 0);
    assert.equal(total, pool.totalMemoryBytes());
    assert.ok(total > MiB, `the bombs took most of the headroom (${total})`);
  } finally {
    await pool.close();
  }
});

for (const [mode, cap] of [['L', /output messages/], ['B', /output bytes/], ['E', /log bytes/]] as const) {
  test(`an output flood (${mode}) fails with output_limit at the cap`, async () => {
    const { result } = await runHostile('output-flood.wat', mode);
    assert.equal(failureOf(result), 'output_limit');
    assert.match(result.ok ? '' : result.message, cap);
    assert.ok(result.stdout.length <= 10);
  });
}

test('a start function that never returns is stopped by fuel', async () => {
  const pool = hostilePool();
  try {
    const bystanders = await addBystanders(pool);
    const started = performance.now();
    await assert.rejects(pool.instantiate('hostile', await handAdmitted('hostile/start-never-returns.wat'), { memoryLimitBytes: MiB }), (error: unknown) => {
      assert.ok(isSvcError(error));
      assert.equal(error.code, 'INVALID_MODULE');
      assert.equal(error.metadata['reason'], 'fuel_exhausted');
      return true;
    });
    assert.ok(performance.now() - started < TIMEOUT_MS);
    await assertAnswering(pool, bystanders);
    assert.equal(pool.stats().instances, 2);
    assert.equal(pool.totalMemoryBytes(), 2 * PAGE);
  } finally {
    await pool.close();
  }
});

for (const file of ['start-spin.wat', 'start-section-spin.wat']) {
  test(`a start that spins without fuel (${file}) is stopped by the watchdog at the startup timeout`, async () => {
    const pool = hostilePool();
    try {
      const bystanders = await addBystanders(pool);
      const events: WorkerLostEvent[] = [];
      pool.on('workerLost', (event) => events.push(event));
      const started = performance.now();
      const module = await handAdmitted(`hostile/${file}`, { hasStartSection: file === 'start-section-spin.wat' });
      await assert.rejects(pool.instantiate('hostile', module, { memoryLimitBytes: MiB }), (error: unknown) => {
        assert.ok(isSvcError(error));
        assert.equal(error.code, 'DEADLINE_EXCEEDED');
        assert.equal(error.metadata['reason'], 'timeout');
        return true;
      });
      const elapsed = performance.now() - started;
      assert.ok(elapsed < TIMEOUT_MS + WATCHDOG_SLACK_MS, `${elapsed} ms`);
      // Placement put it beside bystander-0 on worker 0, which died with it.
      assert.deepEqual(events, [{ workerId: 0, overran: 'hostile', lost: ['bystander-0'] }]);
      await assertAnswering(pool, ['bystander-1']);
      assert.equal(failureOf(await pool.execute('bystander-0', new Uint8Array())), 'not_instantiated');
      assert.equal(pool.totalMemoryBytes(), PAGE);
      assert.equal(bystanders.length, 2);
    } finally {
      await pool.close();
    }
  });
}

test('fd_close(1) and fd_close(2) close them for that instance only; the server keeps its stdout', async () => {
  const pool = hostilePool();
  try {
    const bystanders = await addBystanders(pool);
    await pool.instantiate('hostile', await handAdmitted('hostile/close-stdio.wat'), { memoryLimitBytes: MiB });
    const result = await pool.execute('hostile', new Uint8Array());
    assertOk(result);
    assert.deepEqual(result.stdout, []);
    const errnos = new Int32Array((await pool.snapshot('hostile')).memory.buffer, 1024, 6);
    assert.deepEqual([...errnos], [0, 0, 8, 8, 8, 8]);
    // Again: the descriptors stay closed for this instance, so closing them fails now.
    assertOk(await pool.execute('hostile', new Uint8Array()));
    const again = new Int32Array((await pool.snapshot('hostile')).memory.buffer, 1024, 2);
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
    await pool.instantiate('hostile', await handAdmitted('hostile/bad-iovec.wat'), { memoryLimitBytes: MiB });
    const result = await pool.execute('hostile', text.encode('{}'));
    assertOk(result);
    assert.deepEqual(result.stdout, ['{"message_type":"inform"}']);
    const errnos = new Int32Array((await pool.snapshot('hostile')).memory.buffer, 1024, 8);
    assert.deepEqual([...errnos], [21, 21, 21, 21, 21, 21, 21, 8]);
    await assertAnswering(pool, bystanders);
  } finally {
    await pool.close();
  }
});

test('a spin that bypasses fuel is stopped by the watchdog; the worker respawns and the event names the lost agents', async () => {
  const pool = hostilePool();
  try {
    const echo = await handAdmitted('agents/echo.wat');
    // Least-loaded placement: spinner on worker 0, other on worker 1, neighbour on worker 0.
    const spinner = await pool.instantiate('spinner', await handAdmitted('hostile/fuel-bypass.wat'), { memoryLimitBytes: MiB });
    const other = await pool.instantiate('other', echo, { memoryLimitBytes: MiB });
    const neighbour = await pool.instantiate('neighbour', echo, { memoryLimitBytes: MiB });
    assert.deepEqual([spinner.workerId, other.workerId, neighbour.workerId], [0, 1, 0]);
    const events: WorkerLostEvent[] = [];
    pool.on('workerLost', (event) => events.push(event));

    const started = performance.now();
    const spinning = pool.execute('spinner', new Uint8Array());
    const queuedBehind = pool.execute('neighbour', text.encode('{}'));
    // The other worker keeps answering while worker 0 spins.
    for (let i = 0; i < 5; i++) await assertAnswering(pool, ['other']);
    const result = await spinning;
    const elapsed = performance.now() - started;
    assert.equal(failureOf(result), 'timeout');
    assert.ok(elapsed < TIMEOUT_MS + WATCHDOG_SLACK_MS, `stopped after ${elapsed.toFixed(1)} ms`);
    assert.equal(failureOf(await queuedBehind), 'worker_lost');
    assert.deepEqual(events, [{ workerId: 0, overran: 'spinner', lost: ['neighbour'] }]);

    const stats = pool.stats();
    assert.equal(stats.workersLost, 1);
    assert.equal(stats.instances, 1);
    assert.equal(pool.totalMemoryBytes(), PAGE);
    // The replacement was a warm spare; a new agent lands on the respawned worker 0 and answers.
    const again = await pool.instantiate('neighbour', echo, { memoryLimitBytes: MiB });
    assert.equal(again.workerId, 0);
    await assertAnswering(pool, ['neighbour', 'other']);
    const respawnMs = pool.stats().lastRespawnMs;
    assert.ok(respawnMs !== null && respawnMs < 100, `respawn ${respawnMs} ms`);
    const spawnMs = pool.stats().lastSpawnMs?.toFixed(0);
    console.log(`# watchdog stop after ${elapsed.toFixed(1)} ms (timeout ${TIMEOUT_MS} ms); respawn ${respawnMs?.toFixed(2)} ms (warm spare; a cold spawn took ${spawnMs} ms)`);
  } finally {
    await pool.close();
  }
});

test('through real admission: instrumented fuel stops a plain loop, the budget bounds a plain memory bomb, recursion traps', async () => {
  const pool = hostilePool();
  try {
    const bystanders = await addBystanders(pool);
    await pool.instantiate('spin', await admitted('hostile/plain-spin.wat'), { memoryLimitBytes: MiB });
    await pool.instantiate('bomb', await admitted('hostile/plain-memory-bomb.wat'), { memoryLimitBytes: 2 * MiB });
    await pool.instantiate('deep', await admitted('hostile/plain-recursion.wat'), { memoryLimitBytes: MiB });
    const [spin, bomb, deep] = await Promise.all(['spin', 'bomb', 'deep'].map((id) => pool.execute(id, new Uint8Array())));
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

test('through real admission: a start section that grows past the agent limit is refused, its reservation returned', async () => {
  const pool = hostilePool();
  try {
    const bystanders = await addBystanders(pool);
    const module = await admitted('hostile/plain-start-section-grow.wat');
    assert.equal(module.info.hasStartSection, true);
    await assert.rejects(pool.instantiate('grower', module, { memoryLimitBytes: MiB }), (error: unknown) => {
      assert.ok(isSvcError(error));
      assert.equal(error.code, 'RESOURCE_EXHAUSTED');
      assert.equal(error.metadata['reason'], 'memory_limit');
      return true;
    });
    assert.equal(pool.totalMemoryBytes(), 2 * PAGE);
    const placed = await pool.instantiate('grower', module, { memoryLimitBytes: 8 * MiB });
    assert.equal(placed.memoryBytes, 101 * PAGE);
    await assertAnswering(pool, bystanders);
  } finally {
    await pool.close();
  }
});
