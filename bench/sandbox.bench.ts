/**
 * The sandbox figures of issue 2, each beside a baseline measured in the same run.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { completeMessage } from '../src/bus/message.js';
import { createAdmission } from '../src/sandbox/admission.js';
import { createExecutorPool } from '../src/sandbox/executor-pool.js';
import { instrumentModule } from '../src/sandbox/instrument.js';
import { validateModule } from '../src/sandbox/validate.js';
import { createFdTable, createWasiShim } from '../src/sandbox/wasi.js';
import { FUEL_EXPORT, MEMORY_BUDGET_EXPORT, type AdmittedModule, type ExecutionResult, type ExecutorPool, type InstanceHandle, type SandboxLimits } from '../src/sandbox/types.js';
import { wat } from '../test/helpers/wat.js';
import { sampleMicros, sampleMicrosSync, summarise, type Row } from './harness.js';
import { createIdGenerator } from '../src/bus/message-id.js';

const newId = createIdGenerator();

const LIMITS: SandboxLimits = { maxModuleSize: 10 * 1024 * 1024, maxMemoryPages: 1024, lowerMemoryMaximum: false, fuelPerExecution: 10_000_000_000n };
const OUTPUT = { maxOutputBytes: 1024 * 1024, maxOutputMessages: 100, maxLogBytes: 1024 * 1024 };
const MiB = 1024 * 1024;

function file(path: string): Uint8Array<ArrayBuffer> {
  return new Uint8Array(readFileSync(fileURLToPath(new URL(path, import.meta.url))));
}

async function watFile(path: string): Promise<Uint8Array<ArrayBuffer>> {
  return wat(readFileSync(fileURLToPath(new URL(path, import.meta.url)), 'utf8'));
}

function pool(overrides: Partial<Parameters<typeof createExecutorPool>[0]> = {}): ExecutorPool {
  return createExecutorPool({
    workers: 2,
    wasmMemoryLimitBytes: 4096 * MiB,
    fuelPerExecution: LIMITS.fuelPerExecution,
    executionTimeoutMs: 30_000,
    startupTimeoutMs: 10_000,
    outputLimits: OUTPUT,
    ...overrides,
  });
}

/** Instantiates `admitted` for `label` with `memoryLimitBytes`; resolves with its handle. */
async function place(p: Pick<ExecutorPool, 'instantiate'>, label: string, admitted: AdmittedModule, memoryLimitBytes: number): Promise<InstanceHandle> {
  return (await p.instantiate(admitted, { label, memoryLimitBytes })).instance;
}

function execute(p: Pick<ExecutorPool, 'execute'>, instance: InstanceHandle, input: Uint8Array): Promise<ExecutionResult> {
  return new Promise((resolve) => p.execute(instance, input, resolve));
}

const SAMPLE_MESSAGE = new TextEncoder().encode(JSON.stringify({
  message_id: '01J00000000000000000000000', sender: 'client:bench', receiver: 'agent-1', message_type: 'inform',
  content: 'hello', conversation_id: 'c-1', reply_with: '', in_reply_to: '', language: '', ontology: '', protocol: '', metadata: {}, created_at: '2026-11-21T00:00:00Z',
}));

/** Admission + instrumentation + compile of the echo example (about 12 KB), against compiling it alone. */
async function admission(): Promise<Row[]> {
  const echo = file('../examples/build/echo.wasm');
  const admit = await sampleMicros(() => createAdmission(LIMITS).admit(echo), 300, 30);
  const compile = await sampleMicros(() => WebAssembly.compile(echo), 300, 30);
  const info = validateModule(echo, LIMITS);
  const validate = sampleMicrosSync(() => validateModule(echo, LIMITS), 300);
  const instrument = sampleMicrosSync(() => instrumentModule(echo, info, LIMITS), 300);
  return [
    { name: `admit echo.wasm (${echo.length} B): validate+instrument+compile`, unit: 'ms', median: admit.median / 1000, p99: admit.p99 / 1000, baseline: { name: 'WebAssembly.compile', median: compile.median / 1000 }, target: 'p50 < 3 ms', ok: admit.median < 3000 },
    { name: '  of which validate (allowlist decoder)', unit: 'ms', median: validate.median / 1000, p99: validate.p99 / 1000 },
    { name: '  of which instrument', unit: 'ms', median: instrument.median / 1000, p99: instrument.p99 / 1000 },
  ];
}

/** `new WebAssembly.Instance` from a cached module with the shared WASI imports, as the worker does it. */
async function instantiate(): Promise<Row[]> {
  const counter = file('../examples/build/counter.wasm');
  const admitted = await createAdmission(LIMITS).admit(counter);
  const original = await WebAssembly.compile(counter);
  const imports = createWasiShim(OUTPUT).imports;
  const instrumented = sampleMicrosSync(() => new WebAssembly.Instance(admitted.module, imports), 2000);
  const plain = sampleMicrosSync(() => new WebAssembly.Instance(original, imports), 2000);
  return [{ name: 'instantiate counter from cached module', unit: 'µs', median: instrumented.median, p99: instrumented.p99, baseline: { name: 'uninstrumented module', median: plain.median }, target: 'p50 < 50 µs', ok: instrumented.median < 50 }];
}

/** 10,000 counter agents in one process through the pool: RSS per idle agent, against an empty pool. */
async function manyAgents(count = 10_000): Promise<Row[]> {
  const admitted = await createAdmission(LIMITS).admit(file('../examples/build/counter.wasm'));
  const p = pool();
  try {
    global.gc?.();
    await new Promise((r) => setTimeout(r, 200));
    const before = process.memoryUsage().rss;
    const started = process.hrtime.bigint();
    const placements: Array<Promise<InstanceHandle>> = [];
    for (let i = 0; i < count; i++) placements.push(place(p, `agent-${i}`, admitted, 16 * 65_536));
    const instances = await Promise.all(placements);
    const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6;
    global.gc?.();
    await new Promise((r) => setTimeout(r, 200));
    const after = process.memoryUsage().rss;
    const linear = p.totalMemoryBytes();
    const perAgentKiB = (after - before) / count / 1024;
    const answer = await execute(p, instances.at(-1)!, SAMPLE_MESSAGE);
    if (!answer.ok) throw new Error(`agent-9999 did not answer: ${answer.message}`);
    return [
      { name: `${count.toLocaleString('en-US')} counter agents instantiated (2 workers)`, unit: 'ms', median: elapsedMs, target: '10,000 in one process', ok: p.stats().instances === count },
      // Linear memory is mostly reserved, not resident, so the whole RSS growth is held to the bound.
      { name: '  RSS per idle agent, linear memory included', unit: 'KiB', median: perAgentKiB, target: '< 64 KiB beyond linear memory', ok: perAgentKiB < 64 },
      { name: '  linear memory per agent (declared size)', unit: 'KiB', median: linear / count / 1024 },
      { name: '  mean instantiate+start inside the worker', unit: 'µs', median: p.stats().meanInstantiateNs / 1000 },
    ];
  } finally {
    await p.close();
  }
}

/** Messages/s through the pool to a trivial agent, against calling `handle` in a bare loop on the same data. */
async function delivery(messages = 300_000, agents = 100): Promise<Row[]> {
  const trivial = await createAdmission(LIMITS).admit(await watFile('./fixtures/trivial.wat'));
  const p = pool();
  try {
    const instances: InstanceHandle[] = [];
    for (let i = 0; i < agents; i++) instances.push(await place(p, `t-${i}`, trivial, 65_536));
    const rates: number[] = [];
    for (let round = 0; round < 5; round++) {
      const started = process.hrtime.bigint();
      const calls: Array<Promise<unknown>> = [];
      for (let i = 0; i < messages; i++) calls.push(execute(p, instances[i % agents]!, SAMPLE_MESSAGE));
      await Promise.all(calls);
      rates.push(messages / (Number(process.hrtime.bigint() - started) / 1e9));
    }
    const pooled = summarise(rates);

    const shim = createWasiShim(OUTPUT);
    const instance = new WebAssembly.Instance(trivial.module, shim.imports);
    const exports = instance.exports as { memory: WebAssembly.Memory; handle: () => void } & Record<string, WebAssembly.Global>;
    const fds = createFdTable();
    const bareRates: number[] = [];
    for (let round = 0; round < 5; round++) {
      const started = process.hrtime.bigint();
      for (let i = 0; i < messages; i++) {
        (exports[FUEL_EXPORT] as WebAssembly.Global).value = LIMITS.fuelPerExecution;
        (exports[MEMORY_BUDGET_EXPORT] as WebAssembly.Global).value = 0;
        shim.begin(exports.memory, fds, SAMPLE_MESSAGE);
        exports.handle();
        shim.end();
      }
      bareRates.push(messages / (Number(process.hrtime.bigint() - started) / 1e9));
    }
    const bare = summarise(bareRates);
    return [{ name: `delivery through the pool to a trivial agent (${agents} agents, 2 workers)`, unit: 'msg/s', median: pooled.median, p99: Math.min(...rates), baseline: { name: 'bare handle() loop, 1 thread', median: bare.median }, target: '≥ 300,000 msg/s', ok: pooled.median >= 300_000 }];
  } finally {
    await p.close();
  }
}

/** An admitted agent instantiated on this thread under its own WASI shim, as a worker holds it. */
class ThreadAgent {
  private readonly shim = createWasiShim(OUTPUT);
  private readonly fds = createFdTable();
  private readonly exports: { memory: WebAssembly.Memory; handle: () => void } & Record<string, unknown>;

  constructor(module: WebAssembly.Module) {
    this.exports = new WebAssembly.Instance(module, this.shim.imports).exports as ThreadAgent['exports'];
    (this.exports[MEMORY_BUDGET_EXPORT] as WebAssembly.Global).value = 16;
    const start = this.exports['_initialize'];
    if (typeof start === 'function') this.run(start as () => void, new Uint8Array(0));
  }

  deliver(input: Uint8Array): void {
    this.run(this.exports.handle, input);
  }

  private run(fn: () => void, input: Uint8Array): void {
    (this.exports[FUEL_EXPORT] as WebAssembly.Global).value = LIMITS.fuelPerExecution;
    this.shim.begin(this.exports.memory, this.fds, input);
    fn();
    this.shim.end();
  }
}

/** CPU time of one `deliver`, in µs: best of three rounds, so a busy machine does not inflate it. */
function cpuMicrosPerMessage(deliver: (i: number) => void, messages: number): number {
  for (let i = 0; i < 5_000; i++) deliver(i);
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 3; round++) {
    const start = process.cpuUsage();
    for (let i = 0; i < messages; i++) deliver(i);
    const { user, system } = process.cpuUsage(start);
    best = Math.min(best, (user + system) / messages);
  }
  return best;
}

/**
 * One `handle()` of the example agents (the AssemblyScript SDK: read fd 0, parse the
 * Message, reply) under the WASI shim on one thread, as a worker runs it, with messages
 * as the platform writes them. Baseline: the trivial agent, which reads and writes nothing.
 */
async function sdkHandle(messages = 100_000): Promise<Row[]> {
  const admit = createAdmission(LIMITS);
  const agent = async (bytes: Uint8Array<ArrayBuffer>) => new ThreadAgent((await admit.admit(bytes)).module);
  const partner = 'agent-01JBBBBBBBBBBBBBBBBBBBBBBB';
  const message = (type: 'request' | 'inform', content: string, sender = partner): Uint8Array =>
    Buffer.from(JSON.stringify(completeMessage({ sender, receiver: 'agent-01JAAAAAAAAAAAAAAAAAAAAAAA', message_type: type, content, conversation_id: 'ping-1a2b3c4d', in_reply_to: '01JCCCCCCCCCCCCCCCCCCCCCCC' }, { newId })));
  const pings = Array.from({ length: 100 }, () => message('request', 'ping'));
  const pongs = Array.from({ length: 100 }, () => message('inform', 'pong'));
  const trivial = await agent(await watFile('./fixtures/trivial.wat'));
  const baseline = { name: 'trivial agent', median: cpuMicrosPerMessage((i) => trivial.deliver(pings[i % 100]!), messages) };
  const rows: Row[] = [];
  for (const name of ['pong', 'echo', 'counter']) {
    const example = await agent(file(`../examples/build/${name}.wasm`));
    rows.push({ name: `SDK handle(): ${name}, a request answered`, unit: 'µs', median: cpuMicrosPerMessage((i) => example.deliver(pings[i % 100]!), messages), baseline });
  }
  // Ping answers each pong of its partner with the next ping while a game lasts: a new one starts every 5,000 rounds.
  const ping = await agent(file('../examples/build/ping.wasm'));
  const start = message('request', `start:${partner}:10000`, 'client:bench');
  const playing = (i: number): void => {
    if (i % 5_000 === 0) ping.deliver(start);
    ping.deliver(pongs[i % 100]!);
  };
  rows.push({ name: 'SDK handle(): ping, a pong answered', unit: 'µs', median: cpuMicrosPerMessage(playing, messages), baseline });
  return rows;
}

/** A CPU-bound module instrumented with fuel against the same module uninstrumented. */
async function fuel(): Promise<Row[]> {
  const source = await watFile('../test/fixtures/valid/compute.wat');
  const info = validateModule(source, LIMITS);
  const instrumented = instrumentModule(source, info, LIMITS);
  type Compute = { primes(n: number): number; checksum(words: number): bigint; fib(n: number): number };
  const withFuel = new WebAssembly.Instance(new WebAssembly.Module(new Uint8Array(instrumented.bytes)), {}).exports as unknown as Compute & Record<string, WebAssembly.Global>;
  const plain = new WebAssembly.Instance(new WebAssembly.Module(source), {}).exports as unknown as Compute;
  const refuel = (): void => {
    (withFuel[FUEL_EXPORT] as unknown as WebAssembly.Global).value = LIMITS.fuelPerExecution;
  };
  const rows: Row[] = [];
  const cases: Array<[string, (m: Compute) => unknown, boolean]> = [
    ['primes below 200,000 (loops)', (m) => m.primes(200_000), true],
    ['checksum of 64 KiB (memory loop)', (m) => m.checksum(16_384), true],
    ['fib(27) (recursion, no loops)', (m) => m.fib(27), false],
  ];
  for (const [name, run, gated] of cases) {
    const fueled = sampleMicrosSync(() => { refuel(); run(withFuel); }, 200, 20);
    const bare = sampleMicrosSync(() => run(plain), 200, 20);
    const ratio = fueled.median / bare.median;
    rows.push({ name: `fuel: ${name}`, unit: 'ms', median: fueled.median / 1000, p99: fueled.p99 / 1000, baseline: { name: 'uninstrumented', median: bare.median / 1000 }, ...(gated ? { target: '≤ 1.5×', ok: ratio <= 1.5 } : {}) });
  }
  return rows;
}

/** A spinning agent (fuel too large to matter) stopped by the watchdog, and the worker respawn. */
async function watchdog(timeoutMs = 200, rounds = 7): Promise<Row[]> {
  const spin = await createAdmission(LIMITS).admit(await watFile('./fixtures/spin.wat'));
  const p = pool({ executionTimeoutMs: timeoutMs });
  try {
    const stopped: number[] = [];
    const respawn: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const spinner = await place(p, `spin-${i}`, spin, 65_536);
      const started = process.hrtime.bigint();
      const result = await execute(p, spinner, SAMPLE_MESSAGE);
      stopped.push(Number(process.hrtime.bigint() - started) / 1e6);
      if (result.ok || result.failure !== 'timeout') throw new Error(`spinner ended with ${result.ok ? 'ok' : result.failure}`);
      const ms = p.stats().lastRespawnMs;
      if (ms !== null) respawn.push(ms);
      await new Promise((r) => setTimeout(r, 200));
    }
    const s = summarise(stopped);
    const r = summarise(respawn);
    const spawnMs = p.stats().lastSpawnMs ?? Number.NaN;
    return [
      { name: `spinning agent stopped (execution_timeout ${timeoutMs} ms)`, unit: 'ms', median: s.median, p99: s.p99, baseline: { name: 'execution_timeout', median: timeoutMs }, target: `≤ ${timeoutMs + 50} ms`, ok: s.p99 <= timeoutMs + 50 },
      { name: '  worker replaced (warm spare ready)', unit: 'ms', median: r.median, p99: r.p99, baseline: { name: 'cold worker spawn', median: spawnMs }, target: '< 100 ms', ok: r.p99 < 100 },
    ];
  } finally {
    await p.close();
  }
}

/**
 * Worker respawn with no warm spare, from the compiled build (`dist/`, made by
 * `npm install`), as the server runs it; under tsx a worker also compiles the
 * TypeScript it loads, which is not what production pays.
 */
async function coldRespawn(timeoutMs = 100, rounds = 5): Promise<Row[]> {
  const compiled = new URL('../dist/src/sandbox/executor-pool.js', import.meta.url);
  if (!existsSync(fileURLToPath(compiled))) return [{ name: 'cold worker respawn: run `npm run build` first', unit: 'ms', median: Number.NaN }];
  const { createExecutorPool: createCompiledPool } = (await import(compiled.href)) as { createExecutorPool: typeof createExecutorPool };
  const spin = await createAdmission(LIMITS).admit(await watFile('./fixtures/spin.wat'));
  const trivial = await createAdmission(LIMITS).admit(await watFile('./fixtures/trivial.wat'));
  const p = createCompiledPool({ workers: 2, spareWorkers: 0, wasmMemoryLimitBytes: 64 * MiB, fuelPerExecution: LIMITS.fuelPerExecution, executionTimeoutMs: timeoutMs, startupTimeoutMs: 10_000, outputLimits: OUTPUT });
  try {
    const respawn: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const spinner = await place(p, `spin-${i}`, spin, 65_536);
      const lost = new Promise<number>((resolve) => {
        const off = p.on('workerLost', () => {
          off();
          resolve(performance.now());
        });
      });
      await execute(p, spinner, SAMPLE_MESSAGE);
      const at = await lost;
      // The replacement is ready when an agent placed on the same worker answers.
      const after = await place(p, `after-${i}`, trivial, 65_536);
      const answer = await execute(p, after, SAMPLE_MESSAGE);
      if (!answer.ok) throw new Error(`no answer after respawn: ${answer.message}`);
      respawn.push(p.stats().lastRespawnMs ?? performance.now() - at);
    }
    const r = summarise(respawn);
    return [{ name: 'worker respawn, no spare (compiled build)', unit: 'ms', median: r.median, p99: r.p99, target: '< 100 ms', ok: r.p99 < 100 }];
  } finally {
    await p.close();
  }
}

/** Largest lag of a 5 ms main-thread timer while two agents spin in the pool. */
async function responsiveness(durationMs = 2000): Promise<Row[]> {
  const spin = await createAdmission(LIMITS).admit(await watFile('./fixtures/spin.wat'));
  const p = pool({ executionTimeoutMs: durationMs + 1000 });
  try {
    const spinners = [await place(p, 'spin-a', spin, 65_536), await place(p, 'spin-b', spin, 65_536)];
    const running = spinners.map((spinner) => execute(p, spinner, SAMPLE_MESSAGE));
    const lags: number[] = [];
    await new Promise<void>((done) => {
      let last = performance.now();
      const end = last + durationMs;
      const timer = setInterval(() => {
        const now = performance.now();
        lags.push(Math.max(0, now - last - 5));
        last = now;
        if (now >= end) {
          clearInterval(timer);
          done();
        }
      }, 5);
    });
    await Promise.all(running);
    const s = summarise(lags);
    return [{ name: 'main-thread 5 ms timer lag while 2 agents spin', unit: 'ms', median: s.median, p99: s.p99, target: 'max reported', ok: true, baseline: { name: 'max', median: Math.max(...lags) } }];
  } finally {
    await p.close();
  }
}

export const SANDBOX_BENCHMARKS: ReadonlyArray<[string, () => Promise<Row[]>]> = [
  ['admission', admission],
  ['instantiate', instantiate],
  ['agents', () => manyAgents()],
  ['delivery', () => delivery()],
  ['sdk', () => sdkHandle()],
  ['fuel', fuel],
  ['watchdog', () => watchdog()],
  ['respawn', () => coldRespawn()],
  ['responsiveness', () => responsiveness()],
];
