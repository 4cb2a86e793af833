import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SvcError } from '../../src/errors/svc-error.js';
import { instrumentModule } from '../../src/sandbox/instrument.js';
import { FUEL_EXPORT, MEMORY_BUDGET_EXPORT, START_EXPORT, type InstrumentedModule, type ModuleInfo, type SandboxLimits } from '../../src/sandbox/types.js';
import { validateModule } from '../../src/sandbox/validate.js';
import { wat, watFixture } from '../helpers/wat.js';

const FUEL = 1_000_000_000n;
const LIMITS: SandboxLimits = { maxModuleSize: 1 << 20, maxMemoryPages: 1024, lowerMemoryMaximum: false, fuelPerExecution: FUEL };

type Exports = Record<string, unknown>;

interface Prepared {
  original: Uint8Array;
  info: ModuleInfo;
  instrumented: InstrumentedModule;
}

function prepare(original: Uint8Array, limits = LIMITS): Prepared {
  const info = validateModule(original, limits);
  return { original, info, instrumented: instrumentModule(original, info, limits) };
}

async function fixture(name: string, limits = LIMITS): Promise<Prepared> {
  return prepare(await watFixture(`valid/${name}.wat`), limits);
}

async function instantiate(bytes: Uint8Array, imports: WebAssembly.Imports = {}): Promise<Exports> {
  const { instance } = await WebAssembly.instantiate(bytes as Uint8Array<ArrayBuffer>, imports);
  return instance.exports as Exports;
}

function fn<T = unknown>(exports: Exports, name: string): (...args: unknown[]) => T {
  const f = exports[name];
  assert.equal(typeof f, 'function', `export ${name}`);
  return f as (...args: unknown[]) => T;
}

function global(exports: Exports, name: string): WebAssembly.Global {
  const g = exports[name];
  assert.ok(g instanceof WebAssembly.Global, `export ${name} is a global`);
  return g;
}

/** Fuel burnt by `run`, with the counter reset to FUEL first as the host does. */
function fuelUsed(exports: Exports, run: () => void): bigint {
  const fuel = global(exports, FUEL_EXPORT);
  fuel.value = FUEL;
  run();
  return FUEL - (fuel.value as bigint);
}

const WASI_STUB = {
  wasi_snapshot_preview1: { fd_read: () => 0, fd_write: () => 0, fd_close: () => 0, clock_time_get: () => 0, random_get: () => 0 },
};

describe('instrumentModule', () => {
  it('produces valid modules with the fuel, budget and global exports', async () => {
    for (const name of ['minimal', 'compute', 'wasi', 'grow', 'globals', 'features', 'spin', 'metered']) {
      const { info, instrumented } = await fixture(name);
      assert.ok(WebAssembly.validate(instrumented.bytes as Uint8Array<ArrayBuffer>), name);
      const exports = WebAssembly.Module.exports(new WebAssembly.Module(instrumented.bytes as Uint8Array<ArrayBuffer>));
      const globals = exports.filter((e) => e.kind === 'global').map((e) => e.name);
      for (const expected of [FUEL_EXPORT, MEMORY_BUDGET_EXPORT, ...instrumented.globalExports]) assert.ok(globals.includes(expected), `${name}: ${expected}`);
      assert.equal(instrumented.globalExports.length, info.mutableGlobals.length);
    }
  });

  it('starts the counter at fuelPerExecution and the budget at maximum minus initial pages', async () => {
    const exports = await instantiate((await fixture('grow')).instrumented.bytes);
    assert.equal(global(exports, FUEL_EXPORT).value, FUEL);
    assert.equal(global(exports, MEMORY_BUDGET_EXPORT).value, 7);
  });

  it('leaves results unchanged: loops, recursion, br_table, memory, multi-value, sign extension, saturation', async () => {
    const compute = await fixture('compute');
    const [before, after] = await Promise.all([instantiate(compute.original), instantiate(compute.instrumented.bytes)]);
    for (const [name, arg] of [['primes', 5000], ['fib', 20], ['checksum', 4096], ['dispatch', 1000], ['dispatch', 3]] as const) {
      assert.equal(fn(after, name)(arg), fn(before, name)(arg), `${name}(${arg})`);
    }
    assert.equal(fn(after, 'dispatch')(1000), fn(before, 'dispatch')(1000));
    const features = await fixture('features');
    const [f0, f1] = await Promise.all([instantiate(features.original), instantiate(features.instrumented.bytes)]);
    for (const [name, args] of [['sub_swapped', [10, 3]], ['extend', [0x80]], ['sat', [1e20]], ['sat', [Number.NaN]]] as const) {
      assert.equal(fn(f1, name)(...args), fn(f0, name)(...args), name);
    }
    assert.equal(global(f0, 'started').value, 1);
    assert.equal(global(f1, 'started').value, 0, 'the start section waits for the host');
    fn(f1, START_EXPORT)();
    assert.equal(global(f1, 'started').value, 1);
  });

  it('keeps calls through the table and WASI imports working', async () => {
    const calls: string[] = [];
    const record = (name: string) => () => (calls.push(name), 0);
    const imports = { wasi_snapshot_preview1: Object.fromEntries(Object.keys(WASI_STUB.wasi_snapshot_preview1).map((n) => [n, record(n)])) };
    const exports = await instantiate((await fixture('wasi')).instrumented.bytes, imports);
    fn(exports, 'handle')();
    assert.deepEqual(calls, ['fd_write', 'clock_time_get', 'random_get', 'fd_read', 'fd_close']);
  });

  it('traps an infinite loop and leaves the counter at or below zero', async () => {
    const exports = await instantiate((await fixture('spin')).instrumented.bytes);
    const fuel = global(exports, FUEL_EXPORT);
    fuel.value = 100_000n;
    assert.throws(() => fn(exports, 'handle')(), WebAssembly.RuntimeError);
    assert.ok((fuel.value as bigint) <= 0n, `fuel ${String(fuel.value)}`);
  });

  it('traps unbounded recursion on fuel before the stack runs out', async () => {
    const exports = await instantiate((await fixture('spin')).instrumented.bytes);
    const fuel = global(exports, FUEL_EXPORT);
    fuel.value = 1_000n;
    assert.throws(() => fn(exports, 'recurse')(), (error: unknown) => error instanceof WebAssembly.RuntimeError && /unreachable/.test(error.message));
    assert.ok((fuel.value as bigint) < 0n);
  });

  it('turns a start section into the __svc_start export, which runs out of fuel like any function', async () => {
    const bytes = await wat(`(module (memory (export "memory") 1 1) (func $s (loop (br 0))) (start $s) (func (export "handle")))`);
    const { instrumented } = prepare(bytes, { ...LIMITS, fuelPerExecution: 10_000n });
    const exports = await instantiate(instrumented.bytes);
    const fuel = global(exports, FUEL_EXPORT);
    assert.throws(() => fn(exports, START_EXPORT)(), WebAssembly.RuntimeError);
    assert.ok((fuel.value as bigint) < 0n, 'the host can tell fuel exhaustion from a trap');
  });

  it('charges the documented static costs, deterministically', async () => {
    const exports = await instantiate((await fixture('metered')).instrumented.bytes);
    assert.equal(fuelUsed(exports, () => fn(exports, 'handle')()), 9n);
    assert.equal(fuelUsed(exports, () => fn(exports, 'count_down')(5)), 2n + 7n * 5n);
    assert.equal(fuelUsed(exports, () => fn(exports, 'count_down')(1000)), 2n + 7n * 1000n);
    const compute = await instantiate((await fixture('compute')).instrumented.bytes);
    const small = fuelUsed(compute, () => fn(compute, 'primes')(1000));
    assert.equal(fuelUsed(compute, () => fn(compute, 'primes')(1000)), small);
    assert.ok(fuelUsed(compute, () => fn(compute, 'primes')(2000)) > small);
  });

  it('gives the module no way to name the counter: its indices are past what the original could use', async () => {
    // The counter is global N of a module with N globals; code that names global N does not validate.
    const bytes = await wat(`(module (memory (export "memory") 1 1) (global $g (mut i64) (i64.const 0))
      (func (export "handle") (global.set $g (i64.const 1))))`);
    const patched = bytes.slice();
    const at = patched.findIndex((b, i) => b === 0x24 && patched[i + 1] === 0x00 && patched[i - 2] === 0x42); // global.set 0 after i64.const 1
    assert.ok(at > 0);
    patched[at + 1] = 0x01;
    assert.throws(() => validateModule(patched, LIMITS), (error: unknown) => error instanceof SvcError && error.metadata.reason === 'invalid_module');
    // And the module's own writes to its globals leave the counter alone.
    const exports = await instantiate(prepare(bytes).instrumented.bytes);
    const used = fuelUsed(exports, () => fn(exports, 'handle')());
    assert.ok(used > 0n && used < 10n);
  });

  it('makes memory.grow return -1 past the budget and charges the budget on success', async () => {
    const exports = await instantiate((await fixture('grow')).instrumented.bytes);
    const budget = global(exports, MEMORY_BUDGET_EXPORT);
    const grow = fn<number>(exports, 'grow');
    const size = fn<number>(exports, 'size');
    budget.value = 2;
    assert.equal(grow(3), -1);
    assert.equal(size(), 1);
    assert.equal(budget.value, 2);
    assert.equal(grow(2), 1);
    assert.equal(size(), 3);
    assert.equal(budget.value, 0);
    assert.equal(grow(1), -1);
    assert.equal(grow(0), 3);
    budget.value = 100;
    assert.equal(grow(6), -1, 'over the declared maximum of 8');
    assert.equal(budget.value, 100, 'a failed grow costs nothing');
    assert.equal(fn<number>(exports, 'grow_twice')(2), 3);
    assert.equal(size(), 7);
    assert.equal(budget.value, 96);
    budget.value = 0;
    assert.equal(grow(-1), -1, 'a delta of 2^32 - 1 pages is over any budget');
  });

  it('applies a lowered maximum to the memory section', async () => {
    const bytes = await wat(`(module (memory (export "memory") 1) (func (export "grow") (param i32) (result i32) (memory.grow (local.get 0))) (func (export "handle")))`);
    const { info, instrumented } = prepare(bytes, { ...LIMITS, maxMemoryPages: 4, lowerMemoryMaximum: true });
    assert.deepEqual(info.memory, { initialPages: 1, maximumPages: 4, lowered: true });
    const exports = await instantiate(instrumented.bytes);
    global(exports, MEMORY_BUDGET_EXPORT).value = 1000;
    assert.equal(fn(exports, 'grow')(4), -1);
    assert.equal(fn(exports, 'grow')(3), 1);
    assert.throws(() => (exports.memory as WebAssembly.Memory).grow(1), RangeError);
  });

  it('exports every mutable global so a snapshot restores the state into a new instance', async () => {
    const { info, instrumented } = await fixture('globals');
    assert.deepEqual(instrumented.globalExports, info.mutableGlobals.map((i) => `__svc_global_${i}`));
    const first = await instantiate(instrumented.bytes);
    fn(first, 'handle')();
    fn(first, 'handle')();
    const snapshot = instrumented.globalExports.map((name) => global(first, name).value as number | bigint);
    assert.deepEqual(snapshot, [2, 94n, 2, 3.5]);
    const second = await instantiate(instrumented.bytes);
    instrumented.globalExports.forEach((name, i) => (global(second, name).value = snapshot[i]));
    fn(second, 'handle')();
    assert.equal(fn(second, 'count')(), 3);
    assert.equal(fn(second, 'total')(), 136n);
    assert.equal(global(second, 'scale').value, 4.5, 'the original export and ours name the same global');
  });
});
