/**
 * The relay workload of issue 45: pairs of relay agents (examples/agents/relay.ts)
 * pass a message back and forth for ever through the whole server, each message
 * parsed and answered by its agent, default settings, and a stream subscriber
 * watching one agent. The rate is read from the agents' `messages_received`
 * counters over a window, after a warm-up; beside it, what the process spent
 * (CPU over all threads and on the main thread, peak RSS), the same traffic
 * through the executor pool alone (no routing), and Erlang/OTP processes
 * relaying the same way (bench/fixtures/relay.erl; skipped where `erl` is not
 * installed). Shaped for bench/run.ts (`THROUGHPUT_BENCHMARKS`); also runs alone:
 * `node --import tsx --expose-gc bench/throughput.bench.ts [name ...]`.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { ensureExamplesBuilt } from '../scripts/build-examples.js';
import type { CallContext } from '../src/agents/agent-service-types.js';
import { loadConfig } from '../src/config/load.js';
import { encodeIncoming } from '../src/sandbox/abi.js';
import { createAdmission } from '../src/sandbox/admission.js';
import { createExecutorPool } from '../src/sandbox/executor-pool.js';
import { poolOptionsFrom, sandboxLimitsFrom } from '../src/sandbox/limits.js';
import type { ExecutionResult, InstanceHandle } from '../src/sandbox/types.js';
import { benchServer, deployOne, processCpuMicros, threadCpuMicros } from './agents.bench.js';
import { renderTable, type Row } from './harness.js';

const ctx: CallContext = { principal: 'bench', trace_id: 'bench' };
const built = await ensureExamplesBuilt();
const relayModule = new Uint8Array(readFileSync(built.get('relay')!));
const run = promisify(execFile);

const WARMUP_MS = 1_000;
const WINDOW_MS = 3_000;
const TARGET = 200_000;

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface RelayFigures {
  rate: number;
  /** CPU µs over all threads, and on the main thread, per message. */
  cpuPerMessage: number;
  mainCpuPerMessage: number | undefined;
  peakRssBytes: number;
  /** Events the watching subscriber received in the window. */
  watched: number;
  /** Executions per batch posted to a worker, in the window. */
  perBatch: number;
  /** Share of the executions in the window that were messages delivered inside their worker. */
  localShare: number;
  /** Agents moved beside their partner (co-location), from deploy to the end of the window. */
  moves: number;
}

/** `pairs` relay pairs on a server with `workers` executor workers (0: one per core) and any other settings given. */
async function relay(pairs: number, workers: number, settings: Record<string, number> = {}): Promise<RelayFigures> {
  const b = await benchServer({ 'runtime.executor_workers': workers, ...settings });
  try {
    const host = b.server.host()!;
    const ids: string[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        while (next < 2 * pairs) {
          const i = next++;
          ids[i] = await deployOne(b.service, relayModule, `relay-${i}`);
        }
      }),
    );
    let watched = 0;
    const sink = b.service.subscribe({ agent_id: ids[0] }, () => void (watched += 1), ctx);
    for (let i = 0; i < pairs; i++) await b.service.send({ receiver: ids[2 * i]!, message_type: 'request', content: `relay:${ids[2 * i + 1]}` }, ctx);
    const received = () => ids.reduce((sum, id) => sum + (host.get(id)?.messagesReceived ?? 0), 0);
    await delay(WARMUP_MS);
    let peakRssBytes = process.memoryUsage().rss;
    const sampler = setInterval(() => (peakRssBytes = Math.max(peakRssBytes, process.memoryUsage().rss)), 100);
    const watchedBefore = watched;
    const poolBefore = host.pool.stats();
    const before = received();
    const cpuBefore = processCpuMicros();
    const mainBefore = threadCpuMicros();
    const started = process.hrtime.bigint();
    await delay(WINDOW_MS);
    const messages = received() - before;
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const mainAfter = threadCpuMicros();
    const cpu = processCpuMicros() - cpuBefore;
    const poolAfter = host.pool.stats();
    clearInterval(sampler);
    watched -= watchedBefore;
    sink.close();
    return {
      rate: messages / seconds,
      cpuPerMessage: cpu / messages,
      mainCpuPerMessage: mainBefore === undefined || mainAfter === undefined ? undefined : (mainAfter - mainBefore) / messages,
      peakRssBytes,
      watched,
      perBatch: (poolAfter.executions - poolBefore.executions) / (poolAfter.batches - poolBefore.batches),
      localShare: (poolAfter.localHops - poolBefore.localHops) / (poolAfter.executions - poolBefore.executions),
      moves: host.stats().moves,
    };
  } finally {
    await b.stop();
  }
}

/** The same traffic as chains of `pool.execute` calls on relay instances: no routing, no bus, no bookkeeping. */
async function poolCeiling(pairs: number, workers: number): Promise<number> {
  const config = loadConfig({ env: {}, cwd: tmpdir() });
  const admitted = await createAdmission(sandboxLimitsFrom(config.runtime)).admit(relayModule);
  // The server's pool settings (the aggregate memory cap, not the per-agent one), with generous timeouts.
  const pool = createExecutorPool({ ...poolOptionsFrom(config.runtime), workers, executionTimeoutMs: 30_000, startupTimeoutMs: 10_000 });
  try {
    const players: InstanceHandle[] = [];
    for (let i = 0; i < 2 * pairs; i++) players.push((await pool.instantiate(admitted, { label: `r-${i}`, memoryLimitBytes: 1 << 20 })).instance);
    const input = encodeIncoming({ message_id: '01J00000000000000000000000', sender: 'r-0', receiver: 'r-1', message_type: 'inform', content: 'relay', conversation_id: 'c' });
    let executions = 0;
    let running = true;
    const play = (i: number, turn: number) => {
      const onResult = (result: ExecutionResult) => {
        if (!running) return;
        if (!result.ok) throw new Error(`relay execution failed: ${result.failure}`);
        executions += 1;
        play(i, turn + 1);
      };
      pool.execute(players[2 * i + (turn % 2)]!, input, onResult);
    };
    for (let i = 0; i < pairs; i++) play(i, 0);
    await delay(WARMUP_MS);
    const before = executions;
    const started = process.hrtime.bigint();
    await delay(WINDOW_MS);
    const rate = (executions - before) / (Number(process.hrtime.bigint() - started) / 1e9);
    running = false;
    return rate;
  } finally {
    await pool.close();
  }
}

/** Erlang/OTP processes relaying in pairs, on as many schedulers as cores; undefined where Erlang is not installed. */
async function erlang(pairs: number): Promise<number | undefined> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-erl-'));
  try {
    const source = fileURLToPath(new URL('./fixtures/relay.erl', import.meta.url));
    await run('erlc', ['-o', dir, source]);
    const { stdout } = await run('erl', ['-noshell', '-pa', dir, '+S', String(availableParallelism()), '-run', 'relay', 'main', String(pairs), String(WARMUP_MS), String(WINDOW_MS)]);
    return Number(stdout.trim());
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const PAIRS = 50;

async function relayRows(): Promise<Row[]> {
  const figures = await relay(PAIRS, 0);
  const local = await relay(PAIRS, 0, { 'runtime.local_delivery_hops': 0 });
  const cores = availableParallelism();
  return [
    {
      name: `relay: ${PAIRS} pairs through the whole server, default settings, one agent watched`,
      unit: 'msg/s',
      median: figures.rate,
      target: `≥ ${TARGET.toLocaleString('en-US')} msg/s`,
      ok: figures.rate >= TARGET,
    },
    { name: '  msg/s per core (messages over the CPU seconds of all threads)', unit: 'msg/s', median: 1e6 / figures.cpuPerMessage, baseline: { name: `wall rate over ${cores} cores`, median: figures.rate / cores } },
    ...(figures.mainCpuPerMessage === undefined ? [] : [{ name: '  main-thread CPU per message', unit: 'µs', median: figures.mainCpuPerMessage, baseline: { name: 'all threads', median: figures.cpuPerMessage } }]),
    { name: '  executions per batch posted to a worker (hops included)', unit: 'calls', median: figures.perBatch },
    { name: '  share of messages delivered inside their worker', unit: '%', median: 100 * figures.localShare },
    { name: '  agents moved beside their partner', unit: 'agents', median: figures.moves },
    { name: '  events the watching subscriber received', unit: 'events', median: figures.watched },
    { name: '  peak RSS during the run', unit: 'MiB', median: figures.peakRssBytes / 2 ** 20 },
    { name: '  the same with worker-local delivery off (runtime.local_delivery_hops 0)', unit: 'msg/s', median: local.rate, baseline: { name: 'on (the default)', median: figures.rate } },
  ];
}

async function pairsRows(): Promise<Row[]> {
  const rows: Row[] = [];
  for (const workers of [1, 2]) {
    for (const pairs of [1, 10, 100, 1_000]) {
      const figures = await relay(pairs, workers);
      rows.push({ name: `relay: ${pairs.toLocaleString('en-US')} pairs, ${workers} executor worker${workers === 1 ? '' : 's'}`, unit: 'msg/s', median: figures.rate });
    }
  }
  return rows;
}

async function peerRows(): Promise<Row[]> {
  const workers = availableParallelism();
  const ceiling = await poolCeiling(PAIRS, workers);
  const erl = await erlang(PAIRS);
  if (erl === undefined) process.stderr.write('relay-peers: erl not found (Debian package erlang); the Erlang/OTP row is skipped\n');
  return [
    { name: `relay: ${PAIRS} pairs through the executor pool alone (${workers} workers, no routing)`, unit: 'msg/s', median: ceiling },
    ...(erl === undefined ? [] : [{ name: `relay: ${PAIRS} pairs of Erlang/OTP processes (${workers} schedulers)`, unit: 'msg/s', median: erl, baseline: { name: 'executor pool alone', median: ceiling } }]),
  ];
}

export const THROUGHPUT_BENCHMARKS: ReadonlyArray<[string, () => Promise<Row[]>]> = [
  ['relay', relayRows],
  ['relay-pairs', pairsRows],
  ['relay-peers', peerRows],
];

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const wanted = new Set(process.argv.slice(2));
  const rows: Row[] = [];
  for (const [name, bench] of THROUGHPUT_BENCHMARKS) {
    if (wanted.size > 0 && !wanted.has(name)) continue;
    process.stderr.write(`running ${name}…\n`);
    rows.push(...(await bench()));
  }
  console.log(renderTable(rows));
  process.exit(0);
}
