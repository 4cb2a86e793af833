/**
 * What tracing costs, measured in one run against servers built as
 * `svc start` builds them (startServer + startListeners): tracing off,
 * tracing at the default sample rates and at 1.0, the traced ones exporting
 * over OTLP/HTTP to a local collector.
 * - gRPC `Health` p50, one call in flight, the three servers called in turn
 *   call by call so all see the same machine: at the default rates ≤ 1.1× off;
 * - message throughput: ping/pong games between agents, each started by a
 *   client's `SendMessage` (so each game is one trace, sampled at
 *   `trace_sample_rate`, with a `svc.messages.send` and a `svc.agent.execute`
 *   span per hop when it is): at the default rates ≥ 0.9× off.
 * The figures at 1.0 have no budget.
 *
 * The throughput servers run in processes of their own, `PROCESSES` for
 * each setting, playing without pause. The benchmark time-slices them: one
 * runs at a time (the others stopped with SIGSTOP), in turns of
 * `TURN_HEAD_MS` + `TURN_MS` in a shuffled order, and only the last
 * `TURN_MS` of each turn counts, since a server resumed from SIGSTOP runs
 * slower for about half a second. Over many turns the machine's own drift
 * falls on every setting alike. A setting's rate pools its processes (two
 * processes of one server can run several percent apart); the tracing-off
 * processes in two pooled halves, one against the other, give the run's
 * resolution. The CPU time a message costs (all threads) is shown too: it
 * is steadier than the rate.
 *
 * The collector is a separate process at the lowest CPU priority that counts
 * the spans it receives and answers at once, so the figures include
 * exporting but not a collector competing for the server's cores.
 * Shaped for bench/run.ts (`OBSERVABILITY_BENCHMARKS`); also runs alone:
 * `node --import tsx bench/observability.bench.ts`.
 */
import { execFile, fork, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { constants, setPriority } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { ensureExamplesBuilt } from '../scripts/build-examples.js';
import { SERVER_NODE_FLAGS } from '../src/node-flags.js';
import { renderTable, summarise, type Row } from './harness.js';
import { NODE_PROCESS_ENV, PAIRS, SETTINGS, startNode, type Count, type Node, type NodeCommand, type NodeProcessInit, type NodeReply } from './observability-node.js';

const HEALTH_WARMUP = 2_000;
const HEALTH_SAMPLES = 10_000;
/** Processes per setting (even): a setting's rate pools them, and the tracing-off ones, in two halves, measure the run's resolution. */
const PROCESSES = 6;
/** The start of a process's turn, not counted: a server resumed from SIGSTOP needs about this long to run as it does unstopped. */
const TURN_HEAD_MS = 500;
/** The rest of a process's turn, counted. */
const TURN_MS = 1_000;
/** Running time of each process before its turns count (compiling, tier-up of the agents' WebAssembly, first exports). */
const WARMUP_S = 8;
/** Counted running time of each process. */
const COUNTED_S = 10;
/** The budgets at the default rates: `Health` p50 at most this many times off, message throughput at least. */
const BUDGET = { healthP50: 1.1, throughput: 0.9 } as const;
/** Settings by index (observability-node.ts). */
const OFF = 0;
const DEFAULT = 1;
const FULL = 2;

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

async function timed(call: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await call();
  return Number(process.hrtime.bigint() - start) / 1000;
}

/** A traced setting's row against tracing off: `ratio` is measured over off; `budget` says how far it may go, if it has one. */
function tracedRow(name: string, unit: string, median: number, p99: number | undefined, off: number, budget?: { text: string; ok: (ratio: number) => boolean }): Row {
  const ratio = median / off;
  return {
    name,
    unit,
    median,
    p99,
    baseline: { name: 'tracing off', median: off },
    ...(budget === undefined ? {} : { target: `${budget.text} (${ratio.toFixed(3)}×)`, ok: budget.ok(ratio) }),
  };
}

async function healthRows(nodes: readonly Node[]): Promise<Row[]> {
  for (let i = 0; i < HEALTH_WARMUP; i++) for (const node of nodes) await node.client.health();
  const samples = nodes.map((): number[] => []);
  for (let i = 0; i < HEALTH_SAMPLES; i++) {
    for (const [n, node] of nodes.entries()) samples[n]!.push(await timed(() => node.client.health()));
  }
  const summaries = samples.map((s) => summarise(s));
  const off = summaries[OFF]!;
  const row = (n: number): Row => tracedRow(`gRPC Health, ${SETTINGS[n]!.name}`, 'µs', summaries[n]!.median, summaries[n]!.p99, off.median, n === DEFAULT ? { text: `≤ ${BUDGET.healthP50}× tracing off`, ok: (r) => r <= BUDGET.healthP50 } : undefined);
  return [{ name: `gRPC Health, ${SETTINGS[OFF]!.name}`, unit: 'µs', median: off.median, p99: off.p99 }, row(DEFAULT), row(FULL)];
}

/** A server in a process of its own, playing without pause while it runs. */
interface NodeProcess {
  readonly setting: number;
  /** Lets it run (SIGCONT) or stops it where it is (SIGSTOP). */
  resume(): void;
  pause(): void;
  count(): Promise<Count>;
  /** Ends its games, stops the server and its process; resolves with the spans it dropped. */
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

/**
 * Compiles the server's process (observability-node.ts, with the server's
 * sources) into `dist/` and answers the file to run: plain JavaScript, as
 * `npm start` runs.
 */
async function compiledNodeModule(): Promise<string> {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  await promisify(execFile)(process.execPath, [tsc, '-p', 'tsconfig.bench.json'], { cwd: root });
  return fileURLToPath(new URL('../dist/bench/observability-node.js', import.meta.url));
}

async function startNodeProcess(module: string, init: NodeProcessInit): Promise<NodeProcess> {
  const setting = SETTINGS[init.index]!;
  // Not this process's execArgv (`--import tsx`): the compiled server runs as it ships, under the flags `npm start` gives it.
  const child = fork(module, [], {
    execArgv: [...SERVER_NODE_FLAGS],
    env: { ...process.env, [NODE_PROCESS_ENV]: JSON.stringify(init) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const ask = async (command: NodeCommand): Promise<NodeReply> => {
    const reply = nextReply(child, `${setting.name}: ${command.op}`);
    child.send(command);
    return reply;
  };
  const signal = (name: NodeJS.Signals): void => {
    if (child.exitCode === null && child.signalCode === null) child.kill(name);
  };
  try {
    await nextReply(child, `${setting.name}: start`);
  } catch (error) {
    child.kill();
    throw error;
  }
  signal('SIGSTOP');
  return {
    setting: init.index,
    resume: () => signal('SIGCONT'),
    pause: () => signal('SIGSTOP'),
    async count() {
      const reply = await ask({ op: 'count' });
      if (!('count' in reply)) throw new Error(`${setting.name}: unexpected answer to count`);
      return reply.count;
    },
    async stop() {
      signal('SIGCONT');
      const reply = await ask({ op: 'stop' });
      if (!('dropped' in reply)) throw new Error(`${setting.name}: unexpected answer to stop`);
      return reply.dropped;
    },
    kill() {
      signal('SIGCONT');
      signal('SIGTERM');
    },
  };
}

/** A permutation of 0..n-1 from a seeded generator: each process comes first, and after each other, equally often in the long run. */
function shuffled(n: number, next: () => number): number[] {
  const order = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return order;
}

/** What one process did in its counted turns. */
interface Tally {
  messages: number;
  seconds: number;
  cpuMicros: number;
}

/** Adds to `tally` what a process did between two of its counts. */
function add(tally: Tally, from: Count, to: Count): void {
  tally.messages += to.delivered - from.delivered;
  tally.seconds += to.seconds - from.seconds;
  tally.cpuMicros += to.cpuMicros - from.cpuMicros;
}

const rateOf = (tallies: readonly Tally[]): number => tallies.reduce((sum, t) => sum + t.messages, 0) / tallies.reduce((sum, t) => sum + t.seconds, 0);
const cpuOf = (tallies: readonly Tally[]): number => tallies.reduce((sum, t) => sum + t.cpuMicros, 0) / tallies.reduce((sum, t) => sum + t.messages, 0);

async function messageRows(): Promise<Row[]> {
  const built = await ensureExamplesBuilt();
  const module = await compiledNodeModule();
  const collector = await startCollector();
  const processes: NodeProcess[] = [];
  try {
    for (let copy = 0; copy < PROCESSES; copy++) {
      for (const index of SETTINGS.keys()) processes.push(await startNodeProcess(module, { index, collector: collector.url, ping: built.get('ping')!, pong: built.get('pong')! }));
    }
    const running = processes.map(() => 0);
    const tallies: Tally[] = processes.map(() => ({ messages: 0, seconds: 0, cpuMicros: 0 }));
    let seed = 0x5eed;
    const random = (): number => {
      seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
      return seed / 2 ** 32;
    };
    while (tallies.some((t) => t.seconds < COUNTED_S)) {
      for (const p of shuffled(processes.length, random)) {
        const node = processes[p]!;
        node.resume();
        try {
          const resumed = await node.count();
          await new Promise((r) => setTimeout(r, TURN_HEAD_MS));
          const before = await node.count();
          await new Promise((r) => setTimeout(r, TURN_MS));
          const after = await node.count();
          if (running[p]! >= WARMUP_S) add(tallies[p]!, before, after);
          running[p]! += after.seconds - resumed.seconds;
        } finally {
          node.pause();
        }
      }
    }
    let dropped = 0;
    for (const node of processes) dropped += await node.stop();
    const of = (setting: number): Tally[] => tallies.filter((_, p) => processes[p]!.setting === setting);
    const rates = SETTINGS.map((_, n) => rateOf(of(n)));
    const offs = of(OFF);
    const label = `agent messages, ${PAIRS} ping/pong pairs playing, ${PROCESSES} processes each`;
    const cpuRow = (n: number): Row => ({
      name: `  CPU a message (all threads), ${SETTINGS[n]!.name}`,
      unit: 'µs',
      median: cpuOf(of(n)),
      ...(n === OFF ? {} : { baseline: { name: SETTINGS[OFF]!.name, median: cpuOf(offs) } }),
    });
    return [
      { name: `${label}, ${SETTINGS[OFF]!.name}`, unit: 'msg/s', median: rates[OFF]! },
      tracedRow(`${label}, ${SETTINGS[DEFAULT]!.name}`, 'msg/s', rates[DEFAULT]!, undefined, rates[OFF]!, { text: `≥ ${BUDGET.throughput}× tracing off`, ok: (r) => r >= BUDGET.throughput }),
      tracedRow(`${label}, ${SETTINGS[FULL]!.name}`, 'msg/s', rates[FULL]!, undefined, rates[OFF]!),
      {
        name: '  resolution: the tracing-off processes in two pooled halves, one against the other',
        unit: 'msg/s',
        median: rateOf(offs.slice(PROCESSES / 2)),
        baseline: { name: 'first half', median: rateOf(offs.slice(0, PROCESSES / 2)) },
      },
      ...SETTINGS.map((_, n) => cpuRow(n)),
      ...(await spanRows(collector, dropped)),
    ];
  } finally {
    // Those that stopped have exited already; the rest (after a failure) are ended here.
    for (const node of processes) node.kill();
    await collector.close();
  }
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

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const wanted = new Set(process.argv.slice(2));
  const rows: Row[] = [];
  for (const [name, run] of OBSERVABILITY_BENCHMARKS) {
    if (wanted.size > 0 && !wanted.has(name)) continue;
    process.stderr.write(`running ${name}…\n`);
    rows.push(...(await run()));
  }
  console.log(renderTable(rows));
}
