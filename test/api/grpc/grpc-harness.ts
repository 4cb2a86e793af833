/**
 * Shared by the gRPC tests: the real server (test/agents/agent-fixtures.ts)
 * behind the real gRPC listener on an ephemeral loopback port, and a client.
 */
import assert from 'node:assert/strict';
import { credentials, loadPackageDefinition, Metadata, type Client, type ServiceClientConstructor, type ServiceError } from '@grpc/grpc-js';
import { createGrpcClient, RemoteError, type GrpcClient } from '../../../src/api/grpc/grpc-client.js';
import { createGrpcServer, type GrpcServer } from '../../../src/api/grpc/grpc-server.js';
import { grpcServerOptionsFrom } from '../../../src/api/grpc/grpc-server-options.js';
import { loadManagementProto } from '../../../src/api/proto.js';
import type { ErrorCode } from '../../../src/errors/svc-error.js';
import { startTestServer, testConfig, type TestServer } from '../../agents/agent-fixtures.js';
import type { Clock } from '../../../supervisors/index.js';

/** For every suite that starts a server: a hang fails the suite instead of stalling the whole run. */
export const SUITE_TIMEOUT = { timeout: 240_000 };

export interface GrpcTestServer {
  readonly t: TestServer;
  readonly grpc: GrpcServer;
  readonly address: string;
  readonly client: GrpcClient;
  /** Bus subscriptions open now (gRPC streams hold one each). */
  subscribers(): number;
  stop(): Promise<void>;
}

/** `overrides` are `section.key` → value, as on the command line; `door.clock` runs the listener's own timers. */
export async function startGrpcTestServer(overrides: Record<string, string | number> = {}, door: { clock?: Clock } = {}): Promise<GrpcTestServer> {
  const settings = { 'server.grpc_addr': '127.0.0.1:0', ...overrides };
  const t = await startTestServer({ overrides: settings });
  const grpc = createGrpcServer(t.service, { ...grpcServerOptionsFrom(testConfig(t.dir, settings)), tracing: t.server.tracing, metrics: t.server.metrics, ...door });
  const address = await grpc.start();
  const client = createGrpcClient(address);
  return {
    t,
    grpc,
    address,
    client,
    subscribers: () => t.host().bus.stats().subscribers,
    async stop() {
      client.close();
      await grpc.stop(1_000);
      await t.stop();
    },
  };
}

/** Awaits a call that must fail, and returns its decoded error. */
export async function failure(call: Promise<unknown>): Promise<RemoteError> {
  try {
    await call;
  } catch (error) {
    assert.ok(error instanceof RemoteError, `expected a RemoteError, got ${String(error)}`);
    return error;
  }
  assert.fail('the call succeeded');
}

/** Asserts a failure carried the server's Error (a trace id proves the trailer arrived) with `code`, `grpcCode` and at least `metadata`. */
export function assertError(error: RemoteError, code: ErrorCode, grpcCode: number, metadata: Record<string, string> = {}): void {
  assert.equal(error.code, code, JSON.stringify(error.body));
  assert.equal(error.grpcCode, grpcCode);
  assert.match(error.body.trace_id, /^[0-9a-f]{32}$/, 'the svc-error-bin trailer was sent');
  for (const [key, value] of Object.entries(metadata)) assert.equal(error.body.metadata[key], value, `metadata.${key} of ${JSON.stringify(error.body)}`);
}

/** A bare grpc-js client of the management service, for what the typed client hides (raw metadata, odd requests). */
export function rawClient(address: string, options: Record<string, number> = {}): Client & Record<string, (...args: unknown[]) => unknown> {
  const grpcObject = loadPackageDefinition(loadManagementProto().packageDefinition) as unknown as { svc: { v1: { ManagementService: ServiceClientConstructor } } };
  return new grpcObject.svc.v1.ManagementService(address, credentials.createInsecure(), options) as unknown as Client & Record<string, (...args: unknown[]) => unknown>;
}

/** A unary call on a raw client, resolving with the error (or null) and the trailing metadata. */
export function rawCall(client: ReturnType<typeof rawClient>, method: string, request: unknown, metadata = new Metadata()): Promise<{ error: ServiceError | null; value: unknown }> {
  return new Promise((resolve) => {
    client[method]?.(request, metadata, (error: ServiceError | null, value: unknown) => resolve({ error, value }));
  });
}
