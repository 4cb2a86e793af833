/**
 * What tracing costs (issue 5), measured in one run against three servers
 * built as `svc start` builds them (startServer + startListeners): tracing
 * off, tracing at `trace_sample_rate` 1.0 and at 0.1, both exporting over
 * OTLP/HTTP to a local collector.
 * - gRPC `Health` p50, one call in flight, the three servers called in turn
 *   call by call so all see the same machine: ≤ 1.15× off at 1.0, ≤ 1.05× at 0.1;
 * - message throughput: ping/pong games between agents (each game started by
 *   a client's `SendMessage`, so each is one trace with a `svc.messages.send`
 *   and a `svc.agent.execute` span per hop): at most 15% slower than off at
 *   1.0, 5% at 0.1. Each of the three servers runs in a process of its own,
 *   as `svc start` runs one, so none shares a heap, a garbage collector or
 *   compiled code with another. They take turns game set by game set, in an
 *   order where each server follows each other one equally often (a server
 *   that mostly followed the same one would inherit its leftovers: its
 *   collector's backlog, a machine state). A turn is two sets, and only the
 *   second counts: the first warms the process up again after it idled
 *   through the others' turns. The rate is the messages
 *   delivered per second while every game of the set is playing (from 10%
 *   to 50% of the set's duration), not the set's total time: that would be
 *   the time of its slowest game, and at 0.1 the sampled games, one in ten,
 *   would set it for all.
 * The collector is a separate process at the lowest CPU priority that counts
 * the spans it receives and answers at once, so the figures include
 * exporting but not a collector competing for the server's cores. The spans
 * it received are reported against the spans the games made, so dropped
 * spans show.
 * Shaped for bench/run.ts (`OBSERVABILITY_BENCHMARKS`); also runs alone:
 * `node --import tsx bench/observability.bench.ts`.
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { constants, setPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ensureExamplesBuilt } from '../scripts/build-examples.js';
import { createGrpcClient, type GrpcClient } from '../src/api/grpc/grpc-client.js';
import { loadConfig } from '../src/config/load.js';
import { startListeners, type Listeners } from '../src/listeners.js';
import { startServer, type Server } from '../src/server.js';
import { createLogger } from '../src/telemetry/logger.js';
import { renderTable, summarise, type Row } from './harness.js';

const HEALTH_WARMUP = 2_000;
const HEALTH_SAMPLES = 10_000;
/** Pairs playing at once (the dispatcher batches across agents) and the rounds of each game. */
const PAIRS = 20;
const ROUNDS = 1_000;
/** The part of a game set whose rate counts: all games are still playing then (the fastest game of a set is never twice as fast as the slowest). */
const WINDOW = { from: 0.1, to: 0.5 } as const;
/**
 * Counted game sets per server setting; the median rate counts. The rate of
 * one set scatters widely on the reference VM (26,000–48,000 msg/s for the
 * same server within one run), so the median needs this many to settle. Even,
 * for TURNS, and a multiple of PROCESSES.
 */
const GAME_SETS = 24;
/**
 * The order of the servers' turns, repeated: it crosses each ordered pair of
 * different servers once (0→1, 1→2, 2→0, 0→2, 2→1, and 1→0 into the next
 * round), so each server follows each other one equally often.
 */
const TURNS = [0, 1, 2, 0, 2, 1] as const;
/**
 * Processes per server setting, taking that setting's turns in rotation.
 * The same code runs steadily faster in one process than in another, by up
 * to 24% on the reference VM (partly where its agents' WebAssembly tiers
 * up): one process per setting would measure that luck as much as tracing.
 */
const PROCESSES = 4;
const GAME_TIMEOUT_MS = 60_000;
/** The budgets: what tracing may add at each rate. */
const BUDGET = { full: 1.15, sampled: 1.05 } as const;

/**
 * An OTLP/HTTP collector reduced to what the exporters need: it reads each
 * trace export (protobuf), counts its spans by walking the wire format no
 * deeper than the list of spans, and answers an empty
 * ExportTraceServiceResponse. `GET /stats` reports.
 */
const COLLECTOR = `
const http = require('node:http');
// Protobuf wire walking, just deep enough to count spans: a request's field 1 (ResourceSpans) holds
// field 2 (ScopeSpans), which holds one field 2 per span. Cheap, so the collector stays off the cores.
function varint(b, at) { let v = 0, m = 1; for (;;) { const x = b[at.i++]; v += (x & 0x7f) * m; if (x < 0x80) return v; m *= 128; } }
function fields(b, from, to, want, each) {
  const at = { i: from };
  while (at.i < to) {
    const key = varint(b, at); const wire = key & 7; const field = Math.floor(key / 8);
    if (wire === 0) varint(b, at);
    else if (wire === 1) at.i += 8;
    else if (wire === 5) at.i += 4;
    else if (wire === 2) { const len = varint(b, at); if (field === want) each(at.i, at.i + len); at.i += len; }
    else throw new Error('unexpected wire type ' + wire);
  }
}
let spans = 0, exports = 0;
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    if (req.method === 'GET') return res.end(JSON.stringify({ spans, exports }));
    // Metric pushes (/v1/metrics) are answered and not counted.
    if (req.url !== '/v1/traces') return res.writeHead(200, { 'content-type': req.headers['content-type'] }).end(req.headers['content-type'] === 'application/json' ? '{}' : undefined);
    exports++;
    const b = Buffer.concat(chunks);
    fields(b, 0, b.length, 1, (f, t) => fields(b, f, t, 2, (f2, t2) => fields(b, f2, t2, 2, () => spans++)));
    res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(server.address().port + '\\n'));
process.stdin.on('end', () => process.exit(0)).resume();
`;

interface Collector {
  readonly url: string;
  stats(): Promise<{ spans: number; exports: number }>;
  close(): Promise<void>;
}

async function startCollector(): Promise<Collector> {
  const child: ChildProcess = spawn(process.execPath, ['-e', COLLECTOR], { stdio: ['pipe', 'pipe', 'inherit'] });
  // The collector stands for a backend on another machine: at the lowest priority it does not take the
  // cores of the server under test, whose own cost (export thread included) is what is measured.
  if (child.pid !== undefined) setPriority(child.pid, constants.priority.PRIORITY_LOW);
  const [line] = (await once(child.stdout!, 'data')) as [Buffer];
  const url = `http://127.0.0.1:${line.toString().trim()}`;
  return {
    url,
    stats: async () => (await (await fetch(`${url}/stats`)).json()) as { spans: number; exports: number },
    async close() {
      const exited = once(child, 'exit');
      child.stdin!.end();
      await exited;
    },
  };
}

interface Setting {
  name: string;
  tracing: boolean;
  rate: number;
}

const SETTINGS: readonly Setting[] = [
  { name: 'tracing off', tracing: false, rate: 0 },
  { name: 'tracing 1.0 → OTLP', tracing: true, rate: 1 },
  { name: 'tracing 0.1 → OTLP', tracing: true, rate: 0.1 },
];

interface Node {
  readonly setting: Setting;
  readonly server: Server;
  readonly client: GrpcClient;
  stop(): Promise<void>;
}

async function startNode(setting: Setting, collectorUrl: string): Promise<Node> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-observability-'));
  const flags = {
    'storage.data_dir': dir,
    'server.http_addr': '127.0.0.1:0',
    'server.grpc_addr': '127.0.0.1:0',
    'server.metrics_addr': '127.0.0.1:0',
    'runtime.executor_workers': 1,
    'observability.enable_tracing': setting.tracing,
    'observability.trace_sample_rate': setting.rate,
    'observability.otlp_endpoint': setting.tracing ? collectorUrl : '',
  };
  const config = loadConfig({ argv: Object.entries(flags).map(([key, value]) => `--${key}=${value}`), env: {}, cwd: dir });
  const log = createLogger({ level: 'fatal', enabled: false });
  const server = await startServer(config, log, { cwd: dir });
  let listeners: Listeners;
  try {
    listeners = await startListeners(server, config, log);
  } catch (error) {
    await server.stop();
    throw error;
  }
  const client = createGrpcClient(listeners.addresses.grpc);
  return {
    setting,
    server,
    client,
    async stop() {
      client.close();
      await listeners.stop();
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function timed(call: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await call();
  return Number(process.hrtime.bigint() - start) / 1000;
}

async function until(done: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + GAME_TIMEOUT_MS;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 1));
  }
}

function overheadRow(name: string, unit: string, measured: number, p99: number | undefined, off: number, budget: number, slower: (m: number, o: number) => number): Row {
  const ratio = slower(measured, off);
  return {
    name,
    unit,
    median: measured,
    p99,
    baseline: { name: 'tracing off', median: off },
    target: `≤ ${Math.round((budget - 1) * 100)}% over tracing off (${ratio.toFixed(3)}×)`,
    ok: ratio <= budget,
  };
}

async function healthRows(nodes: readonly Node[]): Promise<Row[]> {
  for (let i = 0; i < HEALTH_WARMUP; i++) for (const node of nodes) await node.client.health();
  const samples = nodes.map((): number[] => []);
  for (let i = 0; i < HEALTH_SAMPLES; i++) {
    for (const [n, node] of nodes.entries()) samples[n]!.push(await timed(() => node.client.health()));
  }
  const [off, full, sampled] = samples.map((s) => summarise(s)) as [ReturnType<typeof summarise>, ReturnType<typeof summarise>, ReturnType<typeof summarise>];
  const slower = (m: number, o: number) => m / o;
  return [
    { name: 'gRPC Health, tracing off', unit: 'µs', median: off.median, p99: off.p99 },
    overheadRow('gRPC Health, tracing 1.0 → OTLP', 'µs', full.median, full.p99, off.median, BUDGET.full, slower),
    overheadRow('gRPC Health, tracing 0.1 → OTLP', 'µs', sampled.median, sampled.p99, off.median, BUDGET.sampled, slower),
  ];
}

/** Deploys the pairs; answers a function that plays one game set and resolves with its rate (messages/s). */
async function pingPongTable(node: Node, wasm: { ping: Buffer; pong: Buffer }): Promise<() => Promise<number>> {
  const pings: string[] = [];
  const pongs: string[] = [];
  for (let i = 0; i < PAIRS; i++) {
    pongs.push((await node.client.deploy({ name: `pong-${i}`, wasm_module: wasm.pong })).agent_id);
    pings.push((await node.client.deploy({ name: `ping-${i}`, wasm_module: wasm.ping })).agent_id);
  }
  const host = node.server.host()!;
  return async () => {
    // Each game is the client's start message, then a ping and a pong per round.
    const messages = PAIRS * (2 * ROUNDS + 1);
    const expected = host.stats().messagesDelivered + messages;
    const started = process.hrtime.bigint();
    const seen: { seconds: number; delivered: number }[] = [];
    await Promise.all(pings.map((ping, i) => node.client.send({ receiver: ping, message_type: 'request', content: `start:${pongs[i]}:${ROUNDS}` })));
    await until(() => {
      const delivered = host.stats().messagesDelivered;
      seen.push({ seconds: Number(process.hrtime.bigint() - started) / 1e9, delivered });
      return delivered >= expected;
    }, `${node.setting.name}: the games to end`);
    const total = seen[seen.length - 1]!.seconds;
    const from = seen.find((p) => p.seconds >= WINDOW.from * total)!;
    const to = seen.findLast((p) => p.seconds <= WINDOW.to * total)!;
    return (to.delivered - from.delivered) / (to.seconds - from.seconds);
  };
}

/** What the benchmark's process asks of a server's process, and what that answers (over the IPC channel). */
type NodeCommand = { op: 'play' } | { op: 'stop' };
type NodeReply = { ready: true } | { rate: number } | { dropped: number } | { error: string };
/** Set in a server's process: which setting it runs and where it exports. */
const NODE_PROCESS_ENV = 'SVC_BENCH_OBSERVABILITY_NODE';

/** A server in a process of its own, with its ping/pong pairs deployed. */
interface NodeProcess {
  readonly setting: Setting;
  /** Plays one game set, then exports what it still holds; resolves with the set's rate (messages/s). */
  play(): Promise<number>;
  /** Stops the server and its process; resolves with the spans it dropped. */
  stop(): Promise<number>;
  kill(): void;
}

function nextReply(child: ChildProcess, what: string): Promise<NodeReply> {
  return new Promise((resolve, reject) => {
    const onMessage = (reply: NodeReply): void => {
      child.off('exit', onExit);
      if ('error' in reply) reject(new Error(`${what}: ${reply.error}`));
      else resolve(reply);
    };
    const onExit = (code: number | null): void => {
      child.off('message', onMessage);
      reject(new Error(`${what}: the server's process exited (${code})`));
    };
    child.once('message', onMessage);
    child.once('exit', onExit);
  });
}

async function startNodeProcess(index: number, collector: Collector): Promise<NodeProcess> {
  const setting = SETTINGS[index]!;
  const child = fork(fileURLToPath(import.meta.url), [], {
    env: { ...process.env, [NODE_PROCESS_ENV]: JSON.stringify({ index, collector: collector.url }) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const ask = async (command: NodeCommand): Promise<NodeReply> => {
    const reply = nextReply(child, `${setting.name}: ${command.op}`);
    child.send(command);
    return reply;
  };
  try {
    await nextReply(child, `${setting.name}: start`);
  } catch (error) {
    child.kill();
    throw error;
  }
  return {
    setting,
    async play() {
      const reply = await ask({ op: 'play' });
      if (!('rate' in reply)) throw new Error(`${setting.name}: unexpected answer to play`);
      return reply.rate;
    },
    async stop() {
      const reply = await ask({ op: 'stop' });
      if (!('dropped' in reply)) throw new Error(`${setting.name}: unexpected answer to stop`);
      return reply.dropped;
    },
    kill: () => child.kill(),
  };
}

/** The server's process: starts the node, deploys the pairs, then plays a set whenever asked. */
async function serveNode(index: number, collectorUrl: string): Promise<void> {
  const send = (reply: NodeReply): void => void process.send!(reply);
  const node = await startNode(SETTINGS[index]!, collectorUrl);
  const built = await ensureExamplesBuilt();
  const play = await pingPongTable(node, { ping: readFileSync(built.get('ping')!), pong: readFileSync(built.get('pong')!) });
  process.on('message', (command: NodeCommand) => {
    void (async () => {
      try {
        if (command.op === 'play') {
          const rate = await play();
          // What is still queued is exported now, so it does not run during the next server's games.
          await node.server.tracing.flush();
          send({ rate });
        } else {
          await node.server.tracing.flush();
          const dropped = node.server.tracing.droppedSpans();
          await node.stop();
          send({ dropped });
          process.disconnect();
        }
      } catch (error) {
        send({ error: String(error) });
      }
    })();
  });
  send({ ready: true });
}

async function messageRows(): Promise<Row[]> {
  await ensureExamplesBuilt();
  const collector = await startCollector();
  const nodes: NodeProcess[] = [];
  try {
    for (let copy = 0; copy < PROCESSES; copy++) for (const index of SETTINGS.keys()) nodes.push(await startNodeProcess(index, collector));
    // Warm-up of a fresh process (compiled modules, JIT, first exports): more than a turn's uncounted set gives.
    for (const node of nodes) await node.play();
    const rates = SETTINGS.map((): number[] => []);
    for (let turn = 0; turn < GAME_SETS * SETTINGS.length; turn++) {
      const n = TURNS[turn % TURNS.length]!;
      const setting = rates[n]!;
      // The setting's processes take its turns in rotation.
      const node = nodes[(setting.length % PROCESSES) * SETTINGS.length + n]!;
      // A process comes to its turn after idling through the others' sets (about 25 s): its first set
      // after that runs cold, at up to 1.5× the CPU a message, so it is played and not counted.
      await node.play();
      setting.push(await node.play());
    }
    let dropped = 0;
    for (const node of nodes) dropped += await node.stop();
    const [off, full, sampled] = rates.map((r) => summarise(r).median) as [number, number, number];
    const slower = (m: number, o: number) => o / m;
    const label = `agent messages, ${PAIRS} ping/pong pairs × ${ROUNDS} rounds, ${PROCESSES} processes each`;
    return [
      { name: `${label}, tracing off`, unit: 'msg/s', median: off },
      overheadRow(`${label}, tracing 1.0 → OTLP`, 'msg/s', full, Math.min(...rates[1]!), off, BUDGET.full, slower),
      overheadRow(`${label}, tracing 0.1 → OTLP`, 'msg/s', sampled, Math.min(...rates[2]!), off, BUDGET.sampled, slower),
      ...SETTINGS.map((setting, n) => processSpread(setting, rates[n]!)),
      ...(await spanRows(collector, dropped)),
    ];
  } finally {
    // Those that stopped have exited already; the rest (after a failure) are ended here.
    for (const node of nodes) node.kill();
    await collector.close();
  }
}

/**
 * How far apart a setting's processes ran: the slowest and the fastest
 * process's median rate, and their gap as a share of the setting's median.
 * Set `i` of a setting was played by its process `i % PROCESSES`.
 */
function processSpread(setting: Setting, rates: readonly number[]): Row {
  const medians = Array.from({ length: PROCESSES }, (_, copy) => summarise(rates.filter((_, i) => i % PROCESSES === copy)).median);
  const [slowest, fastest] = [Math.min(...medians), Math.max(...medians)];
  const k = (rate: number): string => `${(rate / 1000).toFixed(1)}k`;
  return {
    name: `  ${setting.name}: its ${PROCESSES} processes' medians ${k(slowest)}–${k(fastest)} msg/s, gap`,
    unit: '%',
    median: (100 * (fastest - slowest)) / summarise(rates).median,
  };
}

/** What the collector received against what the servers dropped: a dropped span shows. */
async function spanRows(collector: Collector, dropped: number): Promise<Row[]> {
  const { spans, exports } = await collector.stats();
  return [
    { name: `  spans received by the OTLP collector (${exports} exports)`, unit: 'spans', median: spans, ok: spans > 0 },
    { name: '  spans dropped by the servers (export queue full)', unit: 'spans', median: dropped, target: '0', ok: dropped === 0 },
  ];
}

/** The three servers in this process, for the `Health` figure: its calls alternate call by call. */
async function withNodes(run: (nodes: readonly Node[]) => Promise<Row[]>): Promise<Row[]> {
  const collector = await startCollector();
  const nodes: Node[] = [];
  try {
    for (const setting of SETTINGS) nodes.push(await startNode(setting, collector.url));
    const rows = await run(nodes);
    for (const node of nodes) await node.server.tracing.flush();
    const dropped = nodes.reduce((sum, node) => sum + node.server.tracing.droppedSpans(), 0);
    return [...rows, ...(await spanRows(collector, dropped))];
  } finally {
    for (const node of nodes) await node.stop();
    await collector.close();
  }
}

export const observabilityHealth = (): Promise<Row[]> => withNodes((nodes) => healthRows(nodes));
export const observabilityMessages = (): Promise<Row[]> => messageRows();

export const OBSERVABILITY_BENCHMARKS: ReadonlyArray<[string, () => Promise<Row[]>]> = [
  ['observability-health', observabilityHealth],
  ['observability-messages', observabilityMessages],
];

const nodeEnv = process.env[NODE_PROCESS_ENV];
if (nodeEnv !== undefined && process.send !== undefined) {
  const { index, collector } = JSON.parse(nodeEnv) as { index: number; collector: string };
  await serveNode(index, collector);
} else if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const wanted = new Set(process.argv.slice(2));
  const rows: Row[] = [];
  for (const [name, run] of OBSERVABILITY_BENCHMARKS) {
    if (wanted.size > 0 && !wanted.has(name)) continue;
    process.stderr.write(`running ${name}…\n`);
    rows.push(...(await run()));
  }
  console.log(renderTable(rows));
}
