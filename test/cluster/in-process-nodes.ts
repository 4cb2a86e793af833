/**
 * Whole servers (store, workers, listeners, membership on 127.0.0.1) in
 * the test's process, joined into one cluster, for tests that look inside
 * a node or need many messages between nodes.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/load.js';
import { startListeners, type Listeners } from '../../src/listeners.js';
import { startServer, type Server } from '../../src/server.js';
import { capturedLogger, type LogCapture } from '../telemetry/telemetry-fixtures.js';

export interface InProcessNode {
  readonly api: string;
  readonly grpc: string;
  readonly gossip: string;
  readonly server: Server;
  readonly listeners: Listeners;
  /** What the node logged at `warn` and above. */
  readonly warnings: LogCapture;
  stop(): Promise<void>;
}

export interface NodeOptions {
  readonly seed?: string;
  readonly argv?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
}

export async function startInProcessNode(options: NodeOptions = {}): Promise<InProcessNode> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-node-'));
  const env = { SVC_CLUSTER_ADDR: '127.0.0.1:0', ...(options.seed === undefined ? {} : { SVC_CLUSTER_SEEDS: options.seed }), ...options.env };
  const config = loadConfig({
    argv: [`--storage.data_dir=${dir}`, '--server.grpc_addr=127.0.0.1:0', '--server.http_addr=127.0.0.1:0', '--observability.enable_metrics=false', '--runtime.executor_workers=1', ...(options.argv ?? [])],
    env,
  });
  const { log, capture: warnings } = capturedLogger({ level: 'warn' });
  let listeners: Listeners | undefined;
  let server: Server;
  try {
    server = await startServer(config, log, {
      cwd: dir,
      whileStarting: async (starting) => {
        listeners = await startListeners(starting, config, log);
      },
      listenerAddresses: () => listeners?.addresses,
    });
  } catch (error) {
    await listeners?.stop();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const bound = listeners!;
  const gossip = server.cluster!.agents()!.members().find((m) => m.node_id === server.nodeId)!.address;
  return {
    api: `http://${bound.addresses.http}`,
    grpc: bound.addresses.grpc,
    gossip,
    server,
    listeners: bound,
    warnings,
    async stop() {
      await bound.drain();
      await server.stop();
      await bound.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
