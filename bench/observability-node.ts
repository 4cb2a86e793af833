/**
 * The servers of the tracing benchmark (observability.bench.ts), built as
 * `svc start` builds them (startServer + startListeners), and the process
 * each throughput server runs in. Those processes run this file compiled
 * (`tsconfig.bench.json`, into `dist/`) by plain `node`, as `npm start` runs
 * the server, not through tsx, whose transform slows some hot paths: the
 * benchmark measures the server users run.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentRuntime } from '../src/agents/agent-runtime.js';
import { createGrpcClient, type GrpcClient } from '../src/api/grpc/grpc-client.js';
import { loadConfig } from '../src/config/load.js';
import { startListeners, type Listeners } from '../src/listeners.js';
import { startServer, type Server } from '../src/server.js';
import { createLogger } from '../src/telemetry/logger.js';

/** Pairs playing at once in each server (the dispatcher batches across agents) and the rounds of each game. */
export const PAIRS = 20;
export const ROUNDS = 1_000;
/** How long a stopping server may take to finish the games in play. */
const STOP_TIMEOUT_MS = 60_000;

export interface Setting {
  name: string;
  tracing: boolean;
  /** `trace_sample_rate` and `message_trace_sample_rate`; the schema's defaults when absent. */
  rates?: { calls: number; messages: number };
}

/** The baseline first; then the comparison; then every trace sampled, which has no budget. */
export const SETTINGS: readonly Setting[] = [
  { name: 'tracing off', tracing: false },
  { name: 'tracing at the default rates → OTLP', tracing: true },
  { name: 'tracing 1.0 → OTLP', tracing: true, rates: { calls: 1, messages: 1 } },
];

export interface Node {
  readonly setting: Setting;
  readonly server: Server;
  readonly client: GrpcClient;
  stop(): Promise<void>;
}

export async function startNode(setting: Setting, collectorUrl: string): Promise<Node> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-observability-'));
  const flags = {
    'storage.data_dir': dir,
    'server.http_addr': '127.0.0.1:0',
    'server.grpc_addr': '127.0.0.1:0',
    'server.metrics_addr': '127.0.0.1:0',
    // One executor thread, as the figures have always been measured; with two, the main thread alone is the
    // bottleneck and carries all of tracing's cost.
    'runtime.executor_workers': 1,
    // No CPU quota: an execution's time is measured on the wall clock, so one that a SIGSTOP of the
    // benchmark froze for a few turns would be charged those turns, and its agent held back for
    // ten times as long (a 100m quota). That stalled whole games, and at the stop outlasted the wait.
    'runtime.cpu_quota_per_agent': 0,
    // The watchdog's limit is on the wall clock too, and a process waits for its next turn while the
    // seventeen others take theirs: up to 2 × 17 turns of 1.5 s when it comes first in one round and
    // last in the next. With the 30 s default, an execution frozen across such a wait was stopped as
    // a runaway, and every game of that server stalled (one run). Ten minutes is past any wait.
    'runtime.max_execution_time': '10m',
    'runtime.execution_timeout': '10m',
    'observability.enable_tracing': setting.tracing,
    'observability.otlp_endpoint': setting.tracing ? collectorUrl : '',
    ...(setting.rates === undefined
      ? {}
      : { 'observability.trace_sample_rate': setting.rates.calls, 'observability.message_trace_sample_rate': setting.rates.messages }),
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

/**
 * Deploys the pairs and keeps them playing: a game is started by a
 * client's message, and a pair whose game has ended (its ping handed the
 * start and every pong, its pong every ping, and nothing executing) starts
 * the next at once, so as many games play at every moment. Answers a
 * function that stops starting games and resolves when those in play end.
 */
async function playWithoutPause(node: Node, wasm: { ping: Buffer; pong: Buffer }): Promise<() => Promise<void>> {
  const host = node.server.host()!;
  const pairs: { ping: AgentRuntime; pong: AgentRuntime; pingSeen: number; pongSeen: number; playing: boolean }[] = [];
  for (let i = 0; i < PAIRS; i++) {
    const pong = (await node.client.deploy({ name: `pong-${i}`, wasm_module: wasm.pong })).agent_id;
    const ping = (await node.client.deploy({ name: `ping-${i}`, wasm_module: wasm.ping })).agent_id;
    pairs.push({ ping: host.get(ping)!, pong: host.get(pong)!, pingSeen: 0, pongSeen: 0, playing: false });
  }
  let starting = true;
  let failure: unknown;
  const start = (pair: (typeof pairs)[number]): void => {
    pair.pingSeen = pair.ping.messagesReceived;
    pair.pongSeen = pair.pong.messagesReceived;
    pair.playing = true;
    node.client.send({ receiver: pair.ping.id, message_type: 'request', content: `start:${pair.pong.id}:${ROUNDS}` }).catch((error: unknown) => (failure ??= error));
  };
  const ended = (pair: (typeof pairs)[number]): boolean =>
    pair.ping.messagesReceived - pair.pingSeen === ROUNDS + 1 && pair.pong.messagesReceived - pair.pongSeen === ROUNDS && pair.ping.inFlight === undefined && pair.pong.inFlight === undefined;
  const referee = setInterval(() => {
    for (const pair of pairs) {
      if (!pair.playing || !ended(pair)) continue;
      pair.playing = false;
      if (starting) start(pair);
    }
  }, 1);
  for (const pair of pairs) start(pair);
  return async () => {
    starting = false;
    const deadline = Date.now() + STOP_TIMEOUT_MS;
    while (pairs.some((pair) => pair.playing) && Date.now() < deadline && failure === undefined) await new Promise((r) => setTimeout(r, 5));
    clearInterval(referee);
    if (failure !== undefined) throw failure;
    const stuck = pairs.filter((pair) => pair.playing);
    if (stuck.length > 0) {
      // What each unfinished game got, and what the dispatcher counted, for the report.
      const games = stuck.map((pair) => {
        const side = (agent: AgentRuntime, seen: number, due: number): string =>
          `${agent.messagesReceived - seen}/${due} received, mailbox ${agent.mailbox.length}, ${agent.inFlight === undefined ? 'idle' : 'executing'}`;
        return `ping ${side(pair.ping, pair.pingSeen, ROUNDS + 1)}; pong ${side(pair.pong, pair.pongSeen, ROUNDS)}`;
      });
      throw new Error(`${node.setting.name}: ${stuck.length} games still playing ${STOP_TIMEOUT_MS} ms after the last start (${games.join(' | ')}); dispatcher ${JSON.stringify(host.stats())}`);
    }
  };
}

/** A server's count, taken inside its turn: messages handed to agents so far, its clock (s) and the CPU time of all its threads (µs). */
export interface Count {
  delivered: number;
  seconds: number;
  cpuMicros: number;
}

/** What the benchmark's process asks of a server's process, and what that answers (over the IPC channel). */
export type NodeCommand = { op: 'count' } | { op: 'stop' };
export type NodeReply = { ready: true } | { count: Count } | { dropped: number } | { error: string };
/** Set in a server's process: which setting it runs and where it exports. */
export const NODE_PROCESS_ENV = 'SVC_BENCH_OBSERVABILITY_NODE';
/** What a server's process is told in `NODE_PROCESS_ENV`: its setting, the collector and the agents' modules. */
export interface NodeProcessInit {
  index: number;
  collector: string;
  ping: string;
  pong: string;
}

async function serveNode({ index, collector, ping, pong }: NodeProcessInit): Promise<void> {
  const send = (reply: NodeReply): void => void process.send!(reply);
  const node = await startNode(SETTINGS[index]!, collector);
  const host = node.server.host()!;
  const endGames = await playWithoutPause(node, { ping: readFileSync(ping), pong: readFileSync(pong) });
  process.on('message', (command: NodeCommand) => {
    if (command.op === 'count') {
      const cpu = process.cpuUsage();
      send({ count: { delivered: host.stats().messagesDelivered, seconds: Number(process.hrtime.bigint()) / 1e9, cpuMicros: cpu.user + cpu.system } });
      return;
    }
    void (async () => {
      try {
        await endGames();
        await node.server.tracing.flush();
        const dropped = node.server.tracing.droppedSpans();
        await node.stop();
        send({ dropped });
        process.disconnect();
      } catch (error) {
        send({ error: String(error) });
      }
    })();
  });
  send({ ready: true });
}

const init = process.env[NODE_PROCESS_ENV];
if (init !== undefined && process.send !== undefined) await serveNode(JSON.parse(init) as NodeProcessInit);
