/**
 * `svc start` processes forming a cluster on 127.0.0.1, for the tests that
 * need real processes (kills, restarts, hand-overs): each node with its own
 * data directory, joined through the first node's gossip address.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { logged, request, startSvc, until, type SvcProcess } from './svc-process.js';

export interface ClusterNode {
  readonly svc: SvcProcess;
  readonly dir: string;
  readonly api: string;
  readonly grpc: string;
  readonly id: string;
  readonly gossip: string;
}

/** A node on `dir`, joining through `seeds`; answered once it has joined and started. */
export async function startNode(dir: string, seeds: readonly string[]): Promise<ClusterNode> {
  const svc = startSvc(dir, [], { SVC_CLUSTER_ADDR: '127.0.0.1:0', ...(seeds.length === 0 ? {} : { SVC_CLUSTER_SEEDS: seeds.join(',') }) });
  const api = await svc.api;
  const joined = await logged(svc, 'cluster joined', (line) => line.msg === 'cluster joined');
  const listening = await logged(svc, 'listening', (line) => line.msg === 'listening');
  await logged(svc, 'started', (line) => line.msg === 'started');
  return { svc, dir, api, grpc: String(listening.grpc), id: String(joined.node_id), gossip: String(joined.address) };
}

/** Three nodes, the second and third joining through the first, in new directories named after `prefix`. */
export async function startThreeNodes(prefix: string): Promise<{ nodes: ClusterNode[]; dirs: string[] }> {
  const dirs = [0, 1, 2].map((i) => mkdtempSync(join(tmpdir(), `${prefix}-${i}-`)));
  const first = await startNode(dirs[0]!, []);
  const rest = await Promise.all([startNode(dirs[1]!, [first.gossip]), startNode(dirs[2]!, [first.gossip])]);
  return { nodes: [first, ...rest], dirs };
}

/** Until every node lists `count` members alive. */
export async function allAlive(nodes: readonly ClusterNode[], count: number): Promise<void> {
  for (const node of nodes) {
    await until(`${count} alive`, () => request(`${node.api}/api/v1/cluster/members`), (a) => ((a.body.members ?? []) as Array<{ state: string }>).filter((m) => m.state === 'alive').length === count);
  }
}

/** Stops the nodes and removes their directories. */
export async function stopNodes(nodes: readonly ClusterNode[], dirs: readonly string[]): Promise<void> {
  await Promise.all(nodes.map((n) => n.svc.stop()));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
}
