/**
 * Routing between two cluster nodes in this process, each a whole server
 * (store, workers, listeners, membership on 127.0.0.1), default settings.
 *
 * - a client's request to an echo agent and the echo's reply, the client on
 *   node A (REST send, WebSocket stream), the agent on node B, beside the
 *   same with the agent on node A;
 * - a ping-pong between agents, ping on A and pong on B, beside both on A:
 *   messages per second of one conversation (each ping waits for its pong).
 *
 * Shaped for bench/run.ts (`CLUSTER_ROUTING_BENCHMARKS`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { summarise, type Row } from './harness.js';
import { loadConfig } from '../src/config/load.js';
import { startListeners, type Listeners } from '../src/listeners.js';
import { startServer, type Server } from '../src/server.js';
import { createLogger } from '../src/telemetry/logger.js';
import { example } from '../test/agents/agent-fixtures.js';

const ROUND_TRIPS = 300;
const PING_ROUNDS = 500;

interface Node {
  readonly api: string;
  readonly server: Server;
  readonly listeners: Listeners;
  readonly dir: string;
}

async function startNode(seed: string | undefined): Promise<Node & { gossip: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-cluster-'));
  const env = { SVC_CLUSTER_ADDR: '127.0.0.1:0', ...(seed === undefined ? {} : { SVC_CLUSTER_SEEDS: seed }) };
  const config = loadConfig({ argv: [`--storage.data_dir=${dir}`, '--server.grpc_addr=127.0.0.1:0', '--server.http_addr=127.0.0.1:0', '--observability.enable_metrics=false', '--runtime.executor_workers=1'], env });
  let listeners: Listeners | undefined;
  const server = await startServer(config, createLogger({ level: 'fatal', enabled: false }), {
    cwd: dir,
    whileStarting: async (starting) => {
      listeners = await startListeners(starting, config, createLogger({ level: 'fatal', enabled: false }));
    },
    listenerAddresses: () => listeners?.addresses,
  });
  const bound = listeners!;
  const gossip = server.cluster!.agents()!.members().find((m) => m.node_id === server.nodeId)!.address;
  return { api: `http://${bound.addresses.http}`, server, listeners: bound, dir, gossip };
}

async function post(url: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const answer = (await res.json()) as Record<string, unknown>;
  if (!res.ok) throw new Error(`${url}: ${res.status} ${JSON.stringify(answer)}`);
  return answer;
}

const deploy = async (node: Node, name: string, agent: string) => String((await post(`${node.api}/api/v1/agents`, { name, wasm_module: Buffer.from(example(agent as 'echo')).toString('base64') })).agent_id);

async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 3_000; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('timed out');
}

/** A stream of `agentId`'s messages on `via`; resolves each waiter on a message from `from`. */
async function stream(via: Node, agentId: string): Promise<{ next(from: string): Promise<void>; count(from: string): number; close(): void }> {
  const socket = new WebSocket(`${via.api.replace('http', 'ws')}/api/v1/agents/${agentId}/messages`);
  const counts = new Map<string, number>();
  let waiter: { from: string; resolve: () => void } | undefined;
  socket.on('message', (data: Buffer) => {
    const message = JSON.parse(data.toString()) as { sender: string };
    counts.set(message.sender, (counts.get(message.sender) ?? 0) + 1);
    if (waiter !== undefined && waiter.from === message.sender) {
      const done = waiter.resolve;
      waiter = undefined;
      done();
    }
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  return {
    next: (from) => new Promise<void>((resolve) => (waiter = { from, resolve })),
    count: (from) => counts.get(from) ?? 0,
    close: () => socket.close(),
  };
}

async function roundTrips(client: Node, agentId: string): Promise<number[]> {
  const replies = await stream(client, agentId);
  const samples: number[] = [];
  try {
    for (let i = 0; i < ROUND_TRIPS + 20; i++) {
      const started = performance.now();
      const reply = replies.next(agentId);
      await post(`${client.api}/api/v1/agents/${agentId}/messages`, { message_type: 'request', content: `hello ${i}` });
      await reply;
      if (i >= 20) samples.push(performance.now() - started);
    }
  } finally {
    replies.close();
  }
  return samples;
}

async function pingPong(pingNode: Node, pongNode: Node, tag: string): Promise<number> {
  const pongId = await deploy(pongNode, `pong-${tag}`, 'pong');
  const pingId = await deploy(pingNode, `ping-${tag}`, 'ping');
  await until(async () => (await fetch(`${pingNode.api}/api/v1/agents/${pongId}`)).ok);
  // The registry spreads by gossip: pong's answer finds ping only once pong's node has heard of it.
  await until(async () => (await fetch(`${pongNode.api}/api/v1/agents/${pingId}`)).ok);
  const seen = await stream(pingNode, pingId);
  try {
    const started = performance.now();
    await post(`${pingNode.api}/api/v1/agents/${pingId}/messages`, { message_type: 'request', content: `start:${pongId}:${PING_ROUNDS}` });
    await until(() => seen.count(pongId) >= PING_ROUNDS).catch(() => {
      throw new Error(`${tag} ping-pong: ${seen.count(pongId)} of ${PING_ROUNDS} pongs seen`);
    });
    return (2 * PING_ROUNDS) / ((performance.now() - started) / 1000);
  } finally {
    seen.close();
  }
}

export async function clusterRouting(): Promise<Row[]> {
  const joinStart = performance.now();
  const a = await startNode(undefined);
  const b = await startNode(a.gossip);
  await until(() => a.server.cluster!.agents()!.members().filter((m) => m.state === 'alive').length === 2);
  const joinMs = performance.now() - joinStart;
  try {
    const remoteEcho = await deploy(b, 'echo-b', 'echo');
    const localEcho = await deploy(a, 'echo-a', 'echo');
    await until(async () => (await fetch(`${a.api}/api/v1/agents/${remoteEcho}`)).ok);
    const local = summarise(await roundTrips(a, localEcho));
    const remote = summarise(await roundTrips(a, remoteEcho));
    const localRate = await pingPong(a, a, 'local');
    const remoteRate = await pingPong(a, b, 'remote');
    return [
      { name: 'cluster: two whole servers started and joined (in one process)', unit: 'ms', median: joinMs },
      { name: 'client → agent → client, agent on another node', unit: 'ms', median: remote.median, p99: remote.p99, baseline: { name: 'agent on the same node', median: local.median } },
      { name: 'agent ↔ agent ping-pong across nodes', unit: 'msg/s', median: remoteRate, baseline: { name: 'on one node', median: localRate } },
    ];
  } finally {
    for (const node of [b, a]) {
      await node.listeners.drain();
      await node.server.stop();
      await node.listeners.stop();
      rmSync(node.dir, { recursive: true, force: true });
    }
  }
}

export const CLUSTER_ROUTING_BENCHMARKS: ReadonlyArray<[string, () => Promise<Row[]>]> = [['cluster-routing', clusterRouting]];
