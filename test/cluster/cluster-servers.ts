/**
 * Whole servers of one cluster in this process, as `svc start` runs them:
 * store, executor workers, agents, the gRPC and HTTP listeners (the
 * node-to-node service included), and the cluster's gossip on loopback, each
 * on ephemeral ports and its own data directory. Waits are bounded polls.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGrpcClient, type GrpcClient } from '../../src/api/grpc/grpc-client.js';
import { loadConfig } from '../../src/config/load.js';
import { startListeners, type Listeners } from '../../src/listeners.js';
import { startServer, type Server } from '../../src/server.js';
import { createLogger } from '../../src/telemetry/logger.js';
import { ctx } from '../agents/agent-fixtures.js';

export interface ClusterServer {
  readonly server: Server;
  readonly id: string;
  readonly grpc: string;
  readonly http: string;
  /** Its gossip address, a seed for the next. */
  readonly gossip: string;
  readonly client: GrpcClient;
  /** Leaves the cluster (its agents handed over), then stops; idempotent. */
  stop(): Promise<void>;
}

/** One secret for the cluster a test builds: calls between its nodes are signed. */
export const clusterSecret = (): string => randomBytes(32).toString('base64');

export async function startClusterServer(secret: string, seeds: readonly string[], flags: readonly string[] = []): Promise<ClusterServer> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-cluster-server-'));
  const config = loadConfig({
    argv: [
      `--storage.data_dir=${dir}`,
      '--server.http_addr=127.0.0.1:0',
      '--server.grpc_addr=127.0.0.1:0',
      '--observability.enable_metrics=false',
      '--runtime.executor_workers=1',
      '--cluster.addr=127.0.0.1:0',
      `--cluster.secret=${secret}`,
      ...(seeds.length === 0 ? [] : [`--cluster.seeds=${seeds.join(',')}`]),
      ...flags,
    ],
    env: {},
    cwd: dir,
  });
  const log = createLogger({ level: 'fatal', enabled: false });
  let bound: Listeners | undefined;
  let server: Server;
  try {
    server = await startServer(config, log, {
      cwd: dir,
      listenerAddresses: () => bound?.addresses,
      whileStarting: async (starting) => {
        bound = await startListeners(starting, config, log);
      },
    });
  } catch (error) {
    await bound?.stop();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const listeners = bound!;
  const client = createGrpcClient(listeners.addresses.grpc);
  const gossip = (await server.service.members(ctx)).members.find((m) => m.node_id === server.nodeId)?.address ?? '';
  let stopping: Promise<void> | undefined;
  return {
    server,
    id: server.nodeId,
    grpc: listeners.addresses.grpc,
    http: listeners.addresses.http,
    gossip,
    client,
    stop() {
      stopping ??= (async () => {
        client.close();
        await listeners.drain();
        await server.stop();
        await listeners.stop();
        rmSync(dir, { recursive: true, force: true });
      })();
      return stopping;
    },
  };
}

/** Three servers of one cluster, the second and third joining through the first; answered once each lists three members alive. */
export async function startThreeClusterServers(secret: string): Promise<ClusterServer[]> {
  const first = await startClusterServer(secret, []);
  const nodes = [first, ...(await Promise.all([startClusterServer(secret, [first.gossip]), startClusterServer(secret, [first.gossip])]))];
  for (const node of nodes) await until('three alive members', async () => (await node.server.service.members(ctx)).members.filter((m) => m.state === 'alive').length === 3);
  return nodes;
}

/** Resolves once `done()` holds, polled; rejects after `timeoutMs`. */
export async function until(what: string, done: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await done()) return;
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
