/**
 * A whole server for the security tests, as `svc start` runs it: the
 * services, both API listeners behind the security steps, in a temporary
 * data directory on ephemeral loopback ports, with its log captured. Plus
 * small clients for both doors that present a credential.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { credentials as grpcCredentials, type ChannelCredentials } from '@grpc/grpc-js';
import { createGrpcClient, RemoteError, type ClientCredentials, type GrpcClient } from '../../src/api/grpc/grpc-client.js';
import { loadConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { startListeners, type Listeners } from '../../src/listeners.js';
import { startServer, type Server, type StartOptions } from '../../src/server.js';
import { createLogger } from '../../src/telemetry/logger.js';

/** A whole key, valid in form, for SVC_SECURITY_BOOTSTRAP_ADMIN_KEY. */
export const ADMIN_KEY = `svc_adminadminadmin2_${'S'.repeat(40)}k2Q`;

export interface SecuredServer {
  readonly dir: string;
  readonly config: Config;
  readonly server: Server;
  readonly listeners: Listeners;
  /** `http://host:port` (or https). */
  readonly base: string;
  readonly grpcAddress: string;
  /** Every log line written so far, as written. */
  log(): string;
  grpc(presented?: ClientCredentials, channel?: ChannelCredentials): GrpcClient;
  stop(): Promise<void>;
}

export interface SecuredServerOptions {
  env?: Record<string, string>;
  flags?: string[];
  start?: Pick<StartOptions, 'clock'>;
  /** https instead of http in `base`. */
  tls?: boolean;
}

export async function startSecuredServer(options: SecuredServerOptions = {}): Promise<SecuredServer> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-secured-'));
  const config = loadConfig({
    argv: [`--storage.data_dir=${dir}`, '--server.http_addr=127.0.0.1:0', '--server.grpc_addr=127.0.0.1:0', '--server.metrics_addr=127.0.0.1:0', '--runtime.executor_workers=1', ...(options.flags ?? [])],
    env: { SVC_SECURITY_AUTH_ENABLED: 'true', SVC_SECURITY_BOOTSTRAP_ADMIN_KEY: ADMIN_KEY, ...options.env },
  });
  let written = '';
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      written += chunk.toString();
      done();
    },
  });
  const log = createLogger({ level: 'debug', enabled: true, stream: sink });
  let listeners: Listeners | undefined;
  const server = await startServer(config, log, {
    cwd: dir,
    ...options.start,
    whileStarting: async (starting) => {
      listeners = await startListeners(starting, config, log);
    },
  });
  const bound = listeners as Listeners;
  const clients: GrpcClient[] = [];
  return {
    dir,
    config,
    server,
    listeners: bound,
    base: `${options.tls === true ? 'https' : 'http'}://${bound.addresses.http}`,
    grpcAddress: bound.addresses.grpc,
    log: () => written,
    grpc(presented = {}, channel) {
      const client = createGrpcClient(bound.addresses.grpc, {}, channel ?? grpcCredentials.createInsecure(), presented);
      clients.push(client);
      return client;
    },
    async stop() {
      for (const client of clients) client.close();
      await bound.stop();
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The code and metadata of a gRPC call that must fail. */
export async function grpcRefusal(call: Promise<unknown>): Promise<{ code: string; metadata: Record<string, string> }> {
  try {
    await call;
  } catch (err) {
    if (!(err instanceof RemoteError)) throw err;
    return { code: err.code, metadata: err.body.metadata };
  }
  throw new Error('the call succeeded');
}
