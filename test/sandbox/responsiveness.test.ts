/**
 * The main thread owns lifecycle, routing and I/O, so it must stay responsive
 * while agents spin (DESIGN.md section 1): agent code only runs in workers.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MiB, failureOf, handAdmitted, testPool } from './sandbox-fixtures.js';

const TICK_MS = 5;
const TIMEOUT_MS = 1_500;
/** Generous: two spinning workers share this machine's two cores with the main thread. */
const MAX_LAG_MS = 100;

test('a 5 ms timer keeps firing on the main thread while two agents spin forever', async () => {
  const pool = testPool({ executionTimeoutMs: TIMEOUT_MS, fuelPerExecution: 1n << 62n });
  try {
    const spin = await handAdmitted('hostile/fuel-bypass.wat');
    const placed = await Promise.all(['spin-a', 'spin-b'].map((id) => pool.instantiate(id, spin, { memoryLimitBytes: MiB })));
    assert.deepEqual(placed.map((p) => p.workerId).sort(), [0, 1]);

    let last = performance.now();
    let maxLag = 0;
    let ticks = 0;
    const timer = setInterval(() => {
      const now = performance.now();
      maxLag = Math.max(maxLag, now - last - TICK_MS);
      last = now;
      ticks += 1;
    }, TICK_MS);
    const started = performance.now();
    const results = await Promise.all(['spin-a', 'spin-b'].map((id) => pool.execute(id, new Uint8Array())));
    const elapsed = performance.now() - started;
    clearInterval(timer);

    assert.deepEqual(results.map(failureOf), ['timeout', 'timeout']);
    console.log(`# ${ticks} ticks of ${TICK_MS} ms in ${elapsed.toFixed(0)} ms of spinning; max timer lag ${maxLag.toFixed(1)} ms`);
    assert.ok(maxLag < MAX_LAG_MS, `max lag ${maxLag.toFixed(1)} ms`);
    assert.ok(ticks > elapsed / TICK_MS / 2, `${ticks} ticks`);
  } finally {
    await pool.close();
  }
});
