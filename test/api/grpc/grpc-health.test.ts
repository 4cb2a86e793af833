/**
 * `grpc.health.v1.Health` as a load balancer or Kubernetes probe calls it: a
 * grpc-js client built from the standard proto alone. Check answers SERVING
 * for the server ("") and the management service, NOT_FOUND (with the
 * svc-error-bin trailer) for any other name; Watch answers at once, again
 * when readiness changes (read on the injected clock), SERVICE_UNKNOWN for
 * an unknown name, and NOT_SERVING before the stream ends when the listener
 * stops. Through `startListeners` it follows /ready: draining is NOT_SERVING.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { credentials, loadPackageDefinition, status as GrpcStatus, type Client, type ClientReadableStream, type ServiceClientConstructor, type ServiceError } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { createSimulatedClock } from '../../../supervisors/index.js';
import { errorFromStatus } from '../../../src/api/grpc/grpc-errors.js';
import { HEALTH_WATCH_INTERVAL_MS } from '../../../src/api/grpc/grpc-health-service.js';
import { createGrpcServer, type GrpcServer } from '../../../src/api/grpc/grpc-server.js';
import { grpcServerOptionsFrom } from '../../../src/api/grpc/grpc-server-options.js';
import { PROTO_DIR } from '../../../src/api/proto.js';
import { loadConfig } from '../../../src/config/load.js';
import { startListeners } from '../../../src/listeners.js';
import { startServer } from '../../../src/server.js';
import { createLogger } from '../../../src/telemetry/logger.js';
import { startTestServer, testConfig, type TestServer } from '../../agents/agent-fixtures.js';
import { SUITE_TIMEOUT } from './grpc-harness.js';

type Status = 'UNKNOWN' | 'SERVING' | 'NOT_SERVING' | 'SERVICE_UNKNOWN';

interface HealthClient {
  check(service: string): Promise<Status>;
  watch(service: string): { call: ClientReadableStream<{ status: Status }>; next(): Promise<Status | 'ended'> };
  close(): void;
}

/** A client from the standard file alone, enums as names, as a probe's generated stub reads them. */
function healthClient(address: string): HealthClient {
  const definition = loadSync('grpc/health/v1/health.proto', { keepCase: true, enums: String, defaults: true, includeDirs: [PROTO_DIR] });
  const Health = (loadPackageDefinition(definition) as unknown as { grpc: { health: { v1: { Health: ServiceClientConstructor } } } }).grpc.health.v1.Health;
  const client = new Health(address, credentials.createInsecure()) as Client & Record<string, (...args: unknown[]) => unknown>;
  return {
    check: (service) =>
      new Promise((resolve, reject) => {
        client.Check?.({ service }, (error: ServiceError | null, response: { status: Status }) => (error ? reject(error) : resolve(response.status)));
      }),
    watch(service) {
      const call = client.Watch?.({ service }) as ClientReadableStream<{ status: Status }>;
      const queue: Array<Status | 'ended'> = [];
      const waiting: Array<(value: Status | 'ended') => void> = [];
      const push = (value: Status | 'ended'): void => {
        const waiter = waiting.shift();
        if (waiter) waiter(value);
        else queue.push(value);
      };
      call.on('data', (response: { status: Status }) => push(response.status));
      call.on('end', () => push('ended'));
      call.on('error', () => push('ended'));
      return { call, next: () => (queue.length > 0 ? Promise.resolve(queue.shift() as Status | 'ended') : new Promise((resolve) => waiting.push(resolve))) };
    },
    close: () => client.close(),
  };
}

describe('grpc.health.v1.Health', SUITE_TIMEOUT, () => {
  let t: TestServer;
  let grpc: GrpcServer;
  let client: HealthClient;
  let ready = false;
  const clock = createSimulatedClock();

  before(async () => {
    t = await startTestServer({ overrides: { 'server.grpc_addr': '127.0.0.1:0' } });
    grpc = createGrpcServer(t.service, { ...grpcServerOptionsFrom(testConfig(t.dir, { 'server.grpc_addr': '127.0.0.1:0' })), readiness: () => ({ ready }), clock });
    client = healthClient(await grpc.start());
  });
  after(async () => {
    client.close();
    await grpc.stop(1_000);
    await t.stop();
  });

  it('Check: the server and the management service follow readiness', async () => {
    ready = true;
    assert.equal(await client.check(''), 'SERVING');
    assert.equal(await client.check('svc.v1.ManagementService'), 'SERVING');
    ready = false;
    assert.equal(await client.check(''), 'NOT_SERVING');
    ready = true;
  });

  it('Check of an unknown service: NOT_FOUND, with the svc-error-bin trailer naming it', async () => {
    const error = await client.check('no.such.Service').then(
      () => assert.fail('answered'),
      (e: ServiceError) => e,
    );
    assert.equal(error.code, GrpcStatus.NOT_FOUND);
    const body = errorFromStatus(error);
    assert.equal(body.code, 'NOT_FOUND');
    assert.equal(body.metadata.service, 'no.such.Service');
    assert.match(body.trace_id, /^[0-9a-f]{32}$/);
  });

  it('Watch: the status at once, then again only when it changes', async () => {
    ready = false;
    const watch = client.watch('');
    assert.equal(await watch.next(), 'NOT_SERVING');
    await clock.advance(HEALTH_WATCH_INTERVAL_MS);
    ready = true;
    await clock.advance(HEALTH_WATCH_INTERVAL_MS);
    assert.equal(await watch.next(), 'SERVING');
    await clock.advance(5 * HEALTH_WATCH_INTERVAL_MS);
    ready = false;
    await clock.advance(HEALTH_WATCH_INTERVAL_MS);
    assert.equal(await watch.next(), 'NOT_SERVING', 'no SERVING repeated in between');
    watch.call.cancel();
    ready = true;
  });

  it('Watch of an unknown service answers SERVICE_UNKNOWN and stays open', async () => {
    const watch = client.watch('no.such.Service');
    assert.equal(await watch.next(), 'SERVICE_UNKNOWN');
    watch.call.cancel();
    assert.equal(await watch.next(), 'ended');
  });
});

describe('grpc.health.v1.Health behind svc start', SUITE_TIMEOUT, () => {
  it('SERVING once started; a drain sends NOT_SERVING to watchers and ends their streams', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-health-'));
    const config = loadConfig({ argv: [`--storage.data_dir=${dir}`, '--server.http_addr=127.0.0.1:0', '--server.grpc_addr=127.0.0.1:0', '--server.metrics_addr=127.0.0.1:0', '--runtime.executor_workers=1'], env: {}, cwd: dir });
    const log = createLogger({ level: 'fatal', enabled: false });
    const server = await startServer(config, log, { cwd: dir });
    const listeners = await startListeners(server, config, log);
    const client = healthClient(listeners.addresses.grpc);
    try {
      assert.equal(await client.check(''), 'SERVING');
      const watch = client.watch('svc.v1.ManagementService');
      assert.equal(await watch.next(), 'SERVING');
      const ready = await fetch(`http://${listeners.addresses.http}/ready`);
      assert.equal(ready.status, 200);
      await listeners.drain();
      assert.equal(await watch.next(), 'NOT_SERVING');
      assert.equal(await watch.next(), 'ended');
      assert.equal((await fetch(`http://${listeners.addresses.http}/ready`)).status, 503);
    } finally {
      client.close();
      await listeners.stop();
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
