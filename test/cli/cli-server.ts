/**
 * A real server with every listener on an ephemeral loopback port, for the
 * CLI tests that run commands in-process against it: the store in a temp
 * dir, real executor workers, the gRPC and REST doors.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGrpcClient, type GrpcClient } from '../../src/api/grpc/grpc-client.js';
import { loadConfig } from '../../src/config/load.js';
import { startListeners, type Listeners } from '../../src/listeners.js';
import { startServer } from '../../src/server.js';
import { createLogger } from '../../src/telemetry/logger.js';

export interface CliServer {
  readonly grpc: string;
  readonly http: string;
  /** The metrics listener (Prometheus text). */
  readonly metrics: string;
  readonly client: GrpcClient;
  /** `--server` for a command line. */
  readonly server: readonly string[];
  stop(): Promise<void>;
}

/** `flags` are more `--section.key=value` settings. */
export async function startCliServer(flags: readonly string[] = []): Promise<CliServer> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-cli-server-'));
  const config = loadConfig({
    argv: [
      `--storage.data_dir=${dir}`,
      '--server.http_addr=127.0.0.1:0',
      '--server.grpc_addr=127.0.0.1:0',
      '--server.metrics_addr=127.0.0.1:0',
      '--runtime.executor_workers=1',
      ...flags,
    ],
    env: {},
    cwd: dir,
  });
  const log = createLogger({ level: 'fatal', enabled: false });
  const server = await startServer(config, log, { cwd: dir });
  let listeners: Listeners;
  try {
    listeners = await startListeners(server, config, log);
  } catch (error) {
    await server.stop();
    throw error;
  }
  const { grpc, http, metrics } = listeners.addresses;
  if (metrics === null) throw new Error('the metrics listener is off');
  const client = createGrpcClient(grpc);
  return {
    grpc,
    http,
    metrics,
    client,
    server: ['--server', grpc],
    async stop() {
      client.close();
      await listeners.stop();
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
