/**
 * Failure detection and failover with three `svc start` processes on
 * 127.0.0.1, default cluster settings (issue 43's targets): a SIGKILLed
 * node declared dead by both survivors, and its agent answering a call
 * again from a survivor, both from the kill; several kills, the node
 * restarted in between. Times are read on this process's clock: the
 * survivors' log lines are polled every 10 ms.
 *
 * Shaped for bench/run.ts (`CLUSTER_FAILOVER_BENCHMARKS`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { summarise, type Row } from './harness.js';
import { deployExample, logged, request, startSvc, until, type SvcProcess } from '../test/integration/svc-process.js';

const KILLS = 4;

interface Node {
  svc: SvcProcess;
  readonly dir: string;
  api: string;
  id: string;
  gossip: string;
}

async function start(dir: string, seeds: string[]): Promise<Node> {
  const svc = startSvc(dir, [], { SVC_CLUSTER_ADDR: '127.0.0.1:0', ...(seeds.length === 0 ? {} : { SVC_CLUSTER_SEEDS: seeds.join(',') }) });
  const api = await svc.api;
  const joined = await logged(svc, 'cluster joined', (line) => line.msg === 'cluster joined');
  await logged(svc, 'started', (line) => line.msg === 'started');
  return { svc, dir, api, id: String(joined.node_id), gossip: String(joined.address) };
}

async function poll(what: () => string, check: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 6_000; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`timed out: ${what()}`);
}

const aliveEverywhere = (nodes: readonly Node[]) =>
  Promise.all(nodes.map((n) => until('all alive', () => request(`${n.api}/api/v1/cluster/members`), (a) => ((a.body.members ?? []) as Array<{ state: string }>).filter((m) => m.state === 'alive').length === nodes.length)));

export async function clusterFailover(): Promise<Row[]> {
  const dirs = [0, 1, 2].map((i) => mkdtempSync(join(tmpdir(), `svc-bench-failover-${i}-`)));
  const nodes: Node[] = [];
  const detection: number[] = [];
  const answering: number[] = [];
  const joins: number[] = [];
  try {
    nodes.push(await start(dirs[0]!, []));
    nodes.push(await start(dirs[1]!, [nodes[0]!.gossip]), await start(dirs[2]!, [nodes[0]!.gossip]));
    await aliveEverywhere(nodes);
    for (let kill = 0; kill < KILLS; kill++) {
      const victim = nodes[2]!;
      const survivors = nodes.slice(0, 2);
      const deployed = await deployExample(victim.api, `victim-${kill}`);
      const agentId = String(deployed.body.agent_id);
      await Promise.all(survivors.map((n) => until('known', () => request(`${n.api}/api/v1/agents/${agentId}`), (a) => a.status === 200)));
      const marks = survivors.map((n) => n.svc.logs().length);
      const killedAt = performance.now();
      await victim.svc.kill();
      const dead = poll(() => `${victim.id} declared dead by both survivors`, () => survivors.every((n, i) => n.svc.logs().slice(marks[i]).some((l) => l.msg === 'cluster member changed' && l.node_id === victim.id && l.to === 'dead'))).then(() => detection.push(performance.now() - killedAt));
      let last: unknown;
      const answers = poll(() => `agent ${agentId} answering on ${survivors[0]!.id}; last answer ${JSON.stringify(last)}; survivors' lines: ${JSON.stringify(survivors.flatMap((n) => n.svc.logs().filter((l) => /fail|agent/.test(l.msg))).slice(-10))}`, async () => {
        // A refused or reset connection is one more poll, as a client would retry.
        const call = await request(`${survivors[0]!.api}/api/v1/agents/${agentId}/call?timeout_ms=1000`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message_type: 'request', content: 'up?' }) }).catch(() => undefined);
        last = call;
        return call?.status === 200;
      }).then(() => answering.push(performance.now() - killedAt));
      await Promise.all([dead, answers]);
      const restarted = await start(victim.dir, [survivors[0]!.gossip]);
      const joinedAt = performance.now();
      nodes[2] = restarted;
      await aliveEverywhere(nodes);
      joins.push(performance.now() - joinedAt);
    }
  } finally {
    await Promise.all(nodes.map((n) => n.svc.stop()));
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
  const dead = summarise(detection.map((ms) => ms / 1000));
  const back = summarise(answering.map((ms) => ms / 1000));
  const joined = summarise(joins.map((ms) => ms / 1000));
  return [
    { name: `3 processes: a restarted node seen alive by all (after its join, ${KILLS} runs)`, unit: 's (p99 = max)', median: joined.median, p99: joined.p99, target: '< 1 s', ok: joined.p99 < 1 },
    { name: `3 processes: a SIGKILLed node declared dead by both survivors (${KILLS} kills)`, unit: 's (p99 = max)', median: dead.median, p99: dead.p99, target: 'p50 ≤ 3 s, max ≤ 6 s', ok: dead.median <= 3 && dead.p99 <= 6 },
    { name: '  its agent answering a call again from a survivor', unit: 's (p99 = max)', median: back.median, p99: back.p99, target: '≤ 8 s', ok: back.p99 <= 8 },
  ];
}

export const CLUSTER_FAILOVER_BENCHMARKS: ReadonlyArray<[string, () => Promise<Row[]>]> = [['cluster-failover', clusterFailover]];
