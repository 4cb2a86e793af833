/**
 * The agent figures of issue 3, through the whole server (AgentService, the
 * agent host, the dispatcher, the bus, the executor pool, SQLite with
 * synchronous=FULL), each beside a baseline measured in the same run.
 * Shaped for bench/run.ts (`AGENT_BENCHMARKS`); also runs alone:
 * `node --import tsx --expose-gc bench/agents.bench.ts [name ...]`.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ensureExamplesBuilt } from '../scripts/build-examples.js';
import type { AgentService, CallContext } from '../src/agents/agent-service-types.js';
import type { BusEvent } from '../src/bus/events.js';
import { loadConfig } from '../src/config/load.js';
import { encodeIncoming } from '../src/sandbox/abi.js';
import { createAdmission } from '../src/sandbox/admission.js';
import { createExecutorPool } from '../src/sandbox/executor-pool.js';
import type { InstanceHandle } from '../src/sandbox/types.js';
import { outputLimitsFrom, sandboxLimitsFrom } from '../src/sandbox/limits.js';
import { startServer, type Server } from '../src/server.js';
import { createStore } from '../src/store/store.js';
import { createLogger } from '../src/telemetry/logger.js';
import { cpuQuota } from './agents-fairness.bench.js';
import { runaways } from './agents-runaway.bench.js';
import { renderTable, summarise, type Row } from './harness.js';

const ctx: CallContext = { principal: 'bench', trace_id: 'bench' };
const built = await ensureExamplesBuilt();
const wasm = (name: string) => new Uint8Array(readFileSync(built.get(name)!));

export interface Bench {
  server: Server;
  service: AgentService;
  stop(): Promise<void>;
}

export async function benchServer(overrides: Record<string, string | number> = {}): Promise<Bench> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-'));
  const argv = Object.entries({ 'storage.data_dir': dir, ...overrides }).map(([k, v]) => `--${k}=${v}`);
  const config = loadConfig({ argv, env: {}, cwd: dir });
  const server = await startServer(config, createLogger({ level: 'fatal', enabled: false }));
  return {
    server,
    service: server.service,
    async stop() {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export const deployOne = (service: AgentService, module: Uint8Array, name: string) =>
  service.deploy({ name, wasm_module: module, capabilities: [], resources: { memory_limit: 0, cpu_shares: 0 } }, ctx).then((r) => r.agent_id);

/** Resolves once `done()` holds, checking every millisecond. */
async function until(done: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

const microsSince = (start: bigint) => Number(process.hrtime.bigint() - start) / 1000;

/**
 * CPU time of the calling thread in µs, from /proc (Linux; undefined elsewhere), in
 * clock ticks of 10 ms: enough over seconds. Unlike wall time it does not grow when
 * other processes take the cores, so it tells the cost of a message on a busy machine.
 */
export function threadCpuMicros(): number | undefined {
  try {
    const stat = readFileSync('/proc/thread-self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return undefined;
  }
}

export const processCpuMicros = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

/** 100 ping/pong pairs playing at once: agent-to-agent messages per second through router, bus and pool. */
export async function pingPong(pairs = 100, rounds = 2_000, games = 3): Promise<Row[]> {
  const b = await benchServer();
  try {
    const host = b.server.host()!;
    const pongs = await Promise.all(Array.from({ length: pairs }, (_, i) => deployOne(b.service, wasm('pong'), `pong-${i}`)));
    const pings = await Promise.all(Array.from({ length: pairs }, (_, i) => deployOne(b.service, wasm('ping'), `ping-${i}`)));
    const rates: number[] = [];
    const mainCpuBefore = threadCpuMicros();
    const cpuBefore = processCpuMicros();
    for (let game = 0; game < games; game++) {
      const before = host.stats().messagesDelivered;
      // Each round is a ping and a pong; the start message is the client's.
      const expected = before + pairs * (2 * rounds + 1);
      const started = process.hrtime.bigint();
      for (let i = 0; i < pairs; i++) await b.service.send({ receiver: pings[i], message_type: 'request', content: `start:${pongs[i]}:${rounds}` }, ctx);
      await until(() => host.stats().messagesDelivered >= expected, 120_000, 'the games to end');
      rates.push((pairs * 2 * rounds) / (microsSince(started) / 1e6));
    }
    const messages = games * pairs * 2 * rounds;
    const mainCpuAfter = threadCpuMicros();
    const cpuPerMessage = (processCpuMicros() - cpuBefore) / messages;
    const figures = summarise(rates);
    const baseline = await rawPingPong(pairs, rounds);
    const cpuRows: Row[] =
      mainCpuBefore === undefined || mainCpuAfter === undefined
        ? []
        : [{ name: '  main-thread CPU per message', unit: 'µs', median: (mainCpuAfter - mainCpuBefore) / messages, baseline: { name: 'all threads', median: cpuPerMessage } }];
    return [
      {
        name: `agent to agent through the bus (${pairs} ping/pong pairs)`,
        unit: 'msg/s',
        median: figures.median,
        p99: Math.min(...rates),
        baseline: { name: 'pool.execute chains, no routing', median: baseline },
        target: '≥ 100,000 msg/s',
        ok: figures.median >= 100_000,
      },
      ...cpuRows,
    ];
  } finally {
    await b.stop();
  }
}

/** The same traffic as bare `pool.execute` chains on the pong module: what routing and the bus add. */
async function rawPingPong(pairs: number, rounds: number): Promise<number> {
  const config = loadConfig({ env: {}, cwd: tmpdir() });
  const admitted = await createAdmission(sandboxLimitsFrom(config.runtime)).admit(wasm('pong'));
  const pool = createExecutorPool({
    workers: 0,
    wasmMemoryLimitBytes: config.runtime.wasm_memory_total,
    fuelPerExecution: BigInt(config.runtime.fuel_per_execution),
    executionTimeoutMs: 30_000,
    startupTimeoutMs: 10_000,
    outputLimits: outputLimitsFrom(config.runtime),
  });
  try {
    const players: InstanceHandle[] = [];
    for (let i = 0; i < 2 * pairs; i++) players.push((await pool.instantiate(admitted, { label: `p-${i}`, memoryLimitBytes: 1 << 20 })).instance);
    const input = encodeIncoming({ message_id: '01J00000000000000000000000', sender: 'p-0', receiver: 'p-1', message_type: 'request', content: 'ping', conversation_id: 'c' });
    const started = process.hrtime.bigint();
    const chain = async (i: number) => {
      for (let r = 0; r < 2 * rounds; r++) await new Promise((resolve) => pool.execute(players[2 * i + (r % 2)]!, input, resolve));
    };
    await Promise.all(Array.from({ length: pairs }, (_, i) => chain(i)));
    return (pairs * 2 * rounds) / (microsSince(started) / 1e6);
  } finally {
    await pool.close();
  }
}

/** Routing latency at 10,000 msg/s offered: `sent` (accepted for routing) to `delivered` (handed to the execution). */
export async function routingLatency(rate = 10_000, seconds = 3, agents = 100): Promise<Row[]> {
  const b = await benchServer();
  try {
    const host = b.server.host()!;
    const echoes = await Promise.all(Array.from({ length: agents }, (_, i) => deployOne(b.service, wasm('echo'), `echo-${i}`)));
    const sentAt = new Map<string, bigint>();
    const askedAt = new Map<string, bigint>();
    const routing: number[] = [];
    const roundTrip: number[] = [];
    host.bus.subscribe().subscribe((event: BusEvent) => {
      if (event.kind !== 'message') return;
      const { message } = event;
      if (event.direction === 'sent' && message.sender === 'client:bench') sentAt.set(message.message_id, process.hrtime.bigint());
      else if (event.direction === 'delivered' && message.sender === 'client:bench') {
        const at = sentAt.get(message.message_id);
        if (at !== undefined) routing.push(microsSince(at));
        sentAt.delete(message.message_id);
      } else if (event.direction === 'delivered' && message.receiver === 'client:bench' && message.in_reply_to !== undefined) {
        const at = askedAt.get(message.in_reply_to);
        if (at !== undefined) roundTrip.push(microsSince(at));
        askedAt.delete(message.in_reply_to);
      }
    });
    const total = rate * seconds;
    const started = process.hrtime.bigint();
    let sent = 0;
    // Paced by the clock, not by timers: each turn sends what is due by now.
    while (sent < total) {
      const due = Math.min(total, Math.floor((microsSince(started) / 1e6) * rate));
      for (; sent < due; sent++) {
        const at = process.hrtime.bigint();
        const { message_id } = await b.service.send({ receiver: echoes[sent % agents], message_type: 'request', content: 'hello' }, ctx);
        askedAt.set(message_id, at);
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    await until(() => roundTrip.length >= total, 30_000, 'every reply');
    const route = summarise(routing);
    const trip = summarise(roundTrip);
    const baseline = await rawRoundTrip(rate, seconds, agents);
    return [
      { name: `local routing latency at ${rate.toLocaleString('en-US')} msg/s offered (sent → delivered)`, unit: 'µs', median: route.median, p99: route.p99, target: 'p50 ≤ 100 µs, p99 ≤ 1 ms', ok: route.median <= 100 && route.p99 <= 1000 },
      { name: '  client send → reply delivered (with the execution)', unit: 'µs', median: trip.median, p99: trip.p99, baseline: { name: 'pool.execute round trip', median: baseline } },
    ];
  } finally {
    await b.stop();
  }
}

/** The executor pool's own round trip at the same offered rate over as many agents, without the server around it. */
async function rawRoundTrip(rate: number, seconds: number, agents: number): Promise<number> {
  const config = loadConfig({ env: {}, cwd: tmpdir() });
  const admitted = await createAdmission(sandboxLimitsFrom(config.runtime)).admit(wasm('echo'));
  const pool = createExecutorPool({
    workers: 0,
    wasmMemoryLimitBytes: config.runtime.wasm_memory_total,
    fuelPerExecution: BigInt(config.runtime.fuel_per_execution),
    executionTimeoutMs: 30_000,
    startupTimeoutMs: 10_000,
    outputLimits: outputLimitsFrom(config.runtime),
  });
  try {
    const echoes: InstanceHandle[] = [];
    for (let i = 0; i < agents; i++) echoes.push((await pool.instantiate(admitted, { label: `e-${i}`, memoryLimitBytes: 1 << 20 })).instance);
    const input = encodeIncoming({ message_id: '01J00000000000000000000000', sender: 'client:bench', receiver: 'e', message_type: 'request', content: 'hello', conversation_id: 'c' });
    const samples: number[] = [];
    const calls: Promise<unknown>[] = [];
    const total = rate * seconds;
    const started = process.hrtime.bigint();
    let sent = 0;
    while (sent < total) {
      const due = Math.min(total, Math.floor((microsSince(started) / 1e6) * rate));
      for (; sent < due; sent++) {
        const at = process.hrtime.bigint();
        calls.push(new Promise((resolve) => pool.execute(echoes[sent % agents]!, input, resolve)).then(() => samples.push(microsSince(at))));
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all(calls);
    return summarise(samples).median;
  } finally {
    await pool.close();
  }
}

/** Deploy from the request to `running`: admission (cached by sha256), the durable write, the first start. */
export async function deployLatency(count = 500): Promise<Row[]> {
  const b = await benchServer();
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-store-'));
  try {
    const counter = wasm('counter');
    await deployOne(b.service, counter, 'warm-up');
    const samples: number[] = [];
    for (let i = 0; i < count; i++) {
      const started = process.hrtime.bigint();
      await deployOne(b.service, counter, `counter-${i}`);
      samples.push(microsSince(started) / 1000);
    }
    const store = createStore({ dataDir: dir });
    const writes: number[] = [];
    for (let i = 0; i < count; i++) {
      const started = process.hrtime.bigint();
      store.putAgentWithModule({ agentId: `a-${i}`, name: `n-${i}`, capabilities: [], resources: { memoryLimit: 0, cpuShares: 0 }, desiredState: 'running', nodeId: 'n', createdAt: Date.now() }, counter);
      writes.push(microsSince(started) / 1000);
    }
    store.close();
    const figures = summarise(samples);
    return [
      { name: 'deploy: admission to running, durable write included', unit: 'ms', median: figures.median, p99: figures.p99, baseline: { name: 'durable write alone', median: summarise(writes).median }, target: 'p50 ≤ 5 ms, p99 ≤ 20 ms', ok: figures.median <= 5 && figures.p99 <= 20 },
    ];
  } finally {
    await b.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Restart after a crash: from the `restarting` transition to `running` again, minus the backoff waited. */
export async function restartLatency(agents = 200, backoffMs = 10): Promise<Row[]> {
  const b = await benchServer({ 'runtime.restart_backoff_initial': `${backoffMs}ms`, 'runtime.restart_backoff_jitter': 0 });
  try {
    const host = b.server.host()!;
    const ids = await Promise.all(Array.from({ length: agents }, (_, i) => deployOne(b.service, wasm('crasher'), `crasher-${i}`)));
    let restartingAt = 0n;
    let runningAt = 0n;
    host.bus.subscribe().subscribe((event: BusEvent) => {
      if (event.kind !== 'lifecycle') return;
      if (event.to === 'restarting') restartingAt = process.hrtime.bigint();
      else if (event.to === 'running' && event.from === 'starting') runningAt = process.hrtime.bigint();
    });
    const samples: number[] = [];
    for (const id of ids) {
      runningAt = 0n;
      await b.service.send({ receiver: id, message_type: 'request', content: 'crash' }, ctx);
      await until(() => runningAt !== 0n, 10_000, 'the restart');
      samples.push(Number(runningAt - restartingAt) / 1e6 - backoffMs);
    }
    const figures = summarise(samples);
    return [
      { name: `restart after a crash, beyond the backoff (${backoffMs} ms)`, unit: 'ms', median: figures.median, p99: figures.p99, baseline: { name: 'mean instantiate+start in a worker', median: host.pool.stats().meanInstantiateNs / 1e6 }, target: 'p99 ≤ 10 ms + backoff', ok: figures.p99 <= 10 },
    ];
  } finally {
    await b.stop();
  }
}

/** 10,000 counter agents deployed through AgentService in one instance; each answers once. */
export async function tenThousandAgents(count = 10_000, parallel = 64): Promise<Row[]> {
  global.gc?.();
  const rssBefore = process.memoryUsage().rss;
  const b = await benchServer();
  try {
    const host = b.server.host()!;
    const counter = wasm('counter');
    const started = process.hrtime.bigint();
    let next = 0;
    const ids: string[] = [];
    await Promise.all(
      Array.from({ length: parallel }, async () => {
        while (next < count) {
          const i = next++;
          ids[i] = await deployOne(b.service, counter, `counter-${i}`);
        }
      }),
    );
    const deployMs = microsSince(started) / 1000;
    const answered = host.stats().messagesSent;
    for (const id of ids) await b.service.send({ receiver: id, message_type: 'request', content: 'count' }, ctx);
    await until(() => host.stats().messagesSent >= answered + count, 60_000, 'every agent to answer');
    global.gc?.();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const rss = process.memoryUsage().rss;
    const running = host.countStates().running;
    return [
      { name: `${count.toLocaleString('en-US')} counter agents deployed (AgentService, ${parallel} at a time)`, unit: 'ms', median: deployMs, target: 'all running and answering', ok: running === count },
      { name: '  process RSS with them all running', unit: 'MiB', median: rss / 2 ** 20, baseline: { name: 'RSS before the server', median: rssBefore / 2 ** 20 }, target: '< 1 GiB', ok: rss < 2 ** 30 },
    ];
  } finally {
    await b.stop();
  }
}

export const AGENT_BENCHMARKS: ReadonlyArray<[string, () => Promise<Row[]>]> = [
  ['ping-pong', () => pingPong()],
  ['routing', () => routingLatency()],
  ['deploy', () => deployLatency()],
  ['restart', () => restartLatency()],
  ['agents-10k', () => tenThousandAgents()],
  ['cpu-quota', () => cpuQuota()],
  ['runaways', () => runaways()],
];

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const wanted = new Set(process.argv.slice(2));
  const rows: Row[] = [];
  for (const [name, run] of AGENT_BENCHMARKS) {
    if (wanted.size > 0 && !wanted.has(name)) continue;
    process.stderr.write(`running ${name}…\n`);
    rows.push(...(await run()));
  }
  console.log(renderTable(rows));
}
