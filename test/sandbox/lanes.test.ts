import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MiB, admitted, assertOk as ok, failureOf, handAdmitted, place, testPool as pool, run } from './sandbox-fixtures.js';

const FUEL = 10_000_000n;
const SLICE = 100_000n;

test('a spinner uses up its slice on the shared lane, is marked a runaway and restarts on the isolated lane with its whole fuel', async () => {
  const p = pool({ workers: 2, isolatedWorkers: 1, fuelPerExecution: FUEL, sliceFuel: SLICE });
  try {
    const spin = await admitted('valid/spin.wat');
    const first = await p.instantiate(spin, { label: 'spinner', memoryLimitBytes: MiB });
    assert.ok(first.workerId < 2, 'a new agent goes to the shared lane');
    const sliced = await run(p, first.instance);
    assert.equal(failureOf(sliced), 'fuel_exhausted');
    assert.ok(!sliced.ok && /slice/.test(sliced.message), 'the message says the slice ran out');
    assert.ok(sliced.fuelUsed > SLICE && sliced.fuelUsed < SLICE * 2n, `one slice burned, not ${sliced.fuelUsed}`);
    assert.equal(p.stats().runaways, 1);

    const again = await p.instantiate(spin, { label: 'spinner', memoryLimitBytes: MiB });
    assert.equal(again.workerId, 2, 'the runaway lives on the isolated lane now');
    const whole = await run(p, again.instance);
    assert.equal(failureOf(whole), 'fuel_exhausted');
    assert.ok(whole.fuelUsed >= FUEL, `its whole fuel there, not ${whole.fuelUsed}`);
    assert.ok(!whole.ok && !/slice/.test(whole.message));
  } finally {
    await p.close();
  }
});

test('agents that behave stay on the shared lane, and the isolated lane has no thread until a runaway needs one', async () => {
  const p = pool({ workers: 2, isolatedWorkers: 1, fuelPerExecution: FUEL, sliceFuel: SLICE });
  try {
    await p.started();
    const echo = await handAdmitted('agents/echo.wat');
    const placed = await Promise.all(['a', 'b', 'c'].map((label) => p.instantiate(echo, { label, memoryLimitBytes: MiB })));
    assert.ok(placed.every((x) => x.workerId < 2));
    for (const { instance } of placed) ok(await run(p, instance, new TextEncoder().encode('{}')));
    assert.equal(p.stats().workers, 2);
    assert.equal(p.stats().runaways, 0);
  } finally {
    await p.close();
  }
});

test('without isolated workers there is no slice: a spinner gets its whole fuel on the shared lane', async () => {
  const p = pool({ workers: 1, isolatedWorkers: 0, fuelPerExecution: FUEL, sliceFuel: SLICE });
  try {
    const spinner = await place(p, 'spinner', await admitted('valid/spin.wat'));
    const result = await run(p, spinner);
    assert.equal(failureOf(result), 'fuel_exhausted');
    assert.ok(result.fuelUsed >= FUEL);
    const again = await p.instantiate(await admitted('valid/spin.wat'), { label: 'spinner', memoryLimitBytes: MiB });
    assert.equal(again.workerId, 0, 'no lane to move to');
  } finally {
    await p.close();
  }
});

test('probation: a shared worker runs one unproven execution at a time, so a proven agent waits for one slice, not for every new spinner', async () => {
  const p = pool({ workers: 1, isolatedWorkers: 1, fuelPerExecution: FUEL, sliceFuel: SLICE });
  try {
    const echo = await place(p, 'echo', await handAdmitted('agents/echo.wat'));
    ok(await run(p, echo, new TextEncoder().encode('{}')));
    const spin = await admitted('valid/spin.wat');
    const spinners = await Promise.all(['s1', 's2', 's3'].map((label) => place(p, label, spin)));
    const order: string[] = [];
    const runs = spinners.map((s) => run(p, s).then((r) => order.push(`${s.label}:${failureOf(r)}`)));
    runs.push(run(p, echo, new TextEncoder().encode('{}')).then((r) => order.push(`echo:${failureOf(r)}`)));
    await Promise.all(runs);
    assert.deepEqual(order, ['s1:fuel_exhausted', 'echo:null', 's2:fuel_exhausted', 's3:fuel_exhausted']);
  } finally {
    await p.close();
  }
});
