/**
 * What tracing costs (issue 5), measured in one run against servers built
 * as `svc start` builds them (startServer + startListeners): tracing off,
 * tracing at `trace_sample_rate` 1.0 and at 0.1, both exporting over
 * OTLP/HTTP to a local collector.
 * - gRPC `Health` p50, one call in flight, the three servers called in turn
 *   call by call so all see the same machine: ≤ 1.15× off at 1.0, ≤ 1.05× at 0.1;
 * - message throughput: ping/pong games between agents (each game started by
 *   a client's `SendMessage`, so each is one trace with a `svc.messages.send`
 *   and a `svc.agent.execute` span per hop): at most 15% slower than off at
 *   1.0, 5% at 0.1.
 *
 * The throughput servers run in processes of their own, six for each
 * setting, and play without pause: a pair whose game ends starts the next.
 * Those processes run the server compiled, by plain `node`, as `npm start`
 * does (observability-node.ts says why); the `Health` servers run here.
 * The benchmark time-slices them. Only one process runs at a time (the
 * others are stopped with SIGSTOP); each gets turns of 1.5 s, in a shuffled
 * order, and counts the messages its agents are handed in the last second
 * of each. The reference VM's speed wanders by ±25% from one half-second to
 * the next (a fixed CPU loop shows it); in a shuffled order over a hundred
 * and more turns that wander falls on every setting alike. The first half
 * second of a turn is not counted: a server resumed after seconds stopped
 * runs slower for about that long, and a traced one much slower (at 1.0,
 * 0.72× off in its first 50 ms, 0.87–0.89× from 100 to 300 ms, 0.93–0.95×
 * from 500 ms on; docs/benchmarks.md, "Thirty-fourth pass"). A server that
 * is never stopped has no such moments, and the 50 ms turns used before
 * measured almost nothing else. The benchmark prints that first part of the
 * turns, against tracing off, beside the figures.
 * A setting's rate pools its six processes: the same server in two
 * processes can run several percent apart for the whole life of both
 * (docs/benchmarks.md, "Twelfth pass"), so a setting measured in fewer
 * processes is measured against luck (with 1.5 s turns, four a setting
 * left the two halves of the untraced ones up to 9% apart). The
 * tracing-off processes in two pooled halves, one against the other, give
 * the benchmark's resolution, and each setting's slowest and fastest
 * process are shown. So is the CPU time a message costs (all threads of
 * the process): it is steadier than the rate, and says what tracing costs
 * where the machine is busy.
 *
 * The collector is a separate process at the lowest CPU priority that counts
 * the spans it receives and answers at once, so the figures include
 * exporting but not a collector competing for the server's cores. The spans
 * it received are reported against the spans the servers dropped.
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
/** Processes per setting (even): a setting's rate pools them, and the tracing-off ones, in two halves, measure the benchmark's resolution. */
const PROCESSES = 6;
/** The start of a process's turn, not counted: a server resumed from SIGSTOP needs about this long to run as it does unstopped. */
const TURN_HEAD_MS = 500;
/** The rest of a process's turn, counted: it runs alone for `TURN_HEAD_MS` and then this long. */
const TURN_MS = 1_000;
/** Running time of each process before its turns count (compiling, tier-up of the agents' WebAssembly, first exports). */
const WARMUP_S = 8;
/** Counted running time of each process. */
const COUNTED_S = 10;
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

async function timed(call: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await call();
  return Number(process.hrtime.bigint() - start) / 1000;
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
    // The uncounted starts of the same turns, shown beside the figures.
    const heads: Tally[] = processes.map(() => ({ messages: 0, seconds: 0, cpuMicros: 0 }));
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
          if (running[p]! >= WARMUP_S) {
            add(heads[p]!, resumed, before);
            add(tallies[p]!, before, after);
          }
          running[p]! += after.seconds - resumed.seconds;
        } finally {
          node.pause();
        }
      }
    }
    let dropped = 0;
    for (const node of processes) dropped += await node.stop();
    const of = (setting: number, from: readonly Tally[] = tallies): Tally[] => from.filter((_, p) => processes[p]!.setting === setting);
    const [off, full, sampled] = SETTINGS.map((_, n) => rateOf(of(n))) as [number, number, number];
    const [offCpu, fullCpu, sampledCpu] = SETTINGS.map((_, n) => cpuOf(of(n))) as [number, number, number];
    // The tracing-off processes in two halves, each pooled, one against the other.
    const offs = of(0);
    const [offFirst, offSecond] = [rateOf(offs.slice(0, PROCESSES / 2)), rateOf(offs.slice(PROCESSES / 2))];
    const spreadRow = (n: number): Row => {
      const rates = of(n).map((t) => rateOf([t]));
      return { name: `  slowest process against the fastest, ${SETTINGS[n]!.name}`, unit: 'msg/s', median: Math.min(...rates), baseline: { name: 'fastest', median: Math.max(...rates) } };
    };
    const slower = (m: number, o: number) => o / m;
    const label = `agent messages, ${PAIRS} ping/pong pairs playing, ${PROCESSES} processes each`;
    const cpuRow = (n: number, cpu: number): Row => ({
      name: `  CPU a message (all threads), ${SETTINGS[n]!.name}`,
      unit: 'µs',
      median: cpu,
      ...(n === 0 ? {} : { baseline: { name: SETTINGS[0]!.name, median: offCpu } }),
    });
    return [
      { name: `${label}, tracing off`, unit: 'msg/s', median: off },
      overheadRow(`${label}, tracing 1.0 → OTLP`, 'msg/s', full, undefined, off, BUDGET.full, slower),
      overheadRow(`${label}, tracing 0.1 → OTLP`, 'msg/s', sampled, undefined, off, BUDGET.sampled, slower),
      { name: `  resolution: the tracing-off processes in two pooled halves, one against the other`, unit: 'msg/s', median: offSecond, baseline: { name: 'first half', median: offFirst } },
      ...SETTINGS.map((_, n) => spreadRow(n)),
      ...[1, 2].map((n): Row => ({
        name: `  first ${TURN_HEAD_MS} ms of each turn (not counted), ${SETTINGS[n]!.name}`,
        unit: 'msg/s',
        median: rateOf(of(n, heads)),
        baseline: { name: SETTINGS[0]!.name, median: rateOf(of(0, heads)) },
      })),
      cpuRow(0, offCpu),
      cpuRow(1, fullCpu),
      cpuRow(2, sampledCpu),
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
