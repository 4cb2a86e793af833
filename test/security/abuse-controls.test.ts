/**
 * Failed-authentication blocking, rate limits and lockdown, each through both
 * doors, against one real server listening on both loopback families: the
 * sources are 127.0.0.1, ::1 and 127.0.0.2, so blocking one leaves the others.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { WebSocket } from 'ws';
import type { ServiceError } from '@grpc/grpc-js';
import { createGrpcClient, remoteError, type GrpcClient } from '../../src/api/grpc/grpc-client.js';
import { ADMIN_KEY, grpcRefusal, startSecuredServer, type SecuredServer } from './secured-server.js';

const BAD_KEY = (keyId: string): string => `svc_${keyId}_${'x'.repeat(43)}`;

let s: SecuredServer;
let port: { http: number; grpc: number };
const clients: GrpcClient[] = [];

before(async () => {
  s = await startSecuredServer({
    flags: ['--server.http_addr=[::]:0', '--server.grpc_addr=[::]:0', '--server.rate_limit_per_second=30', '--server.rate_limit_burst=10', '--security.burst_limit=2'],
    env: { SVC_SECURITY_ENABLE_LOCKDOWN_MODE: 'true' },
  });
  port = { http: Number(s.listeners.addresses.http.split(':').pop()), grpc: Number(s.grpcAddress.split(':').pop()) };
});
after(async () => {
  for (const client of clients) client.close();
  await s.stop();
});

function grpcFrom(host: string, presented: { apiKey?: string; token?: string }): GrpcClient {
  const client = createGrpcClient(host.includes(":") ? `[${host}]:${port.grpc}` : `${host}:${port.grpc}`, {}, undefined, presented);
  clients.push(client);
  return client;
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: { code?: string; metadata?: Record<string, string> } & Record<string, unknown>;
}

/** One REST call from a chosen source address. */
function rest(method: string, path: string, options: { from?: string; apiKey?: string; body?: unknown } = {}): Promise<Answer> {
  const from = options.from ?? '127.0.0.1';
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: from.includes(':') ? '::1' : '127.0.0.1',
        localAddress: from,
        port: port.http,
        method,
        path,
        headers: { ...(options.apiKey === undefined ? {} : { 'x-api-key': options.apiKey }), ...(options.body === undefined ? {} : { 'content-type': 'application/json' }) },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(text) as Answer['body'] }));
      },
    );
    req.on('error', reject);
    req.end(options.body === undefined ? undefined : JSON.stringify(options.body));
  });
}

describe('lockdown, switched at start and at run time', () => {
  test('on at start (enable_lockdown_mode): every operation but health, metrics and audit is UNAVAILABLE (lockdown), both doors and streams', async () => {
    const refused = await rest('GET', '/api/v1/agents', { apiKey: ADMIN_KEY });
    assert.equal(refused.status, 503);
    assert.deepEqual([refused.body.code, refused.body.metadata?.reason], ['UNAVAILABLE', 'lockdown']);
    for (const path of ['/api/v1/health', '/api/v1/metrics', '/api/v1/audit?limit=1']) assert.equal((await rest('GET', path, { apiKey: ADMIN_KEY })).status, 200, path);
    const admin = grpcFrom('127.0.0.1', { apiKey: ADMIN_KEY });
    assert.deepEqual(await grpcRefusal(admin.list()), { code: 'UNAVAILABLE', metadata: { reason: 'lockdown' } });
    assert.equal((await admin.health()).status, 'healthy');
    await admin.metrics();
    await admin.listAudit({ limit: 1 });
    const ws = new WebSocket(`ws://127.0.0.1:${port.http}/api/v1/messages`, { headers: { 'x-api-key': ADMIN_KEY } });
    ws.on('error', () => undefined);
    const status = await new Promise<number | undefined>((resolve) => ws.once('unexpected-response', (_req, res) => resolve(res.statusCode)));
    ws.terminate();
    assert.equal(status, 503);
    const streamed = new Promise((_resolve, reject) => admin.subscribe({}).once('error', (error: ServiceError) => reject(remoteError(error))));
    assert.deepEqual(await grpcRefusal(streamed), { code: 'UNAVAILABLE', metadata: { reason: 'lockdown' } });
  });

  test('lifting it needs system:configure; then PUT /system/lockdown and SetLockdown switch it both ways', async () => {
    const admin = grpcFrom('127.0.0.1', { apiKey: ADMIN_KEY });
    const viewer = await admin.createKey({ name: 'viewer', roles: ['viewer'] }).catch(() => undefined);
    assert.equal(viewer, undefined, 'creating a key is refused in lockdown too');
    // From an address of its own: this failure must not count towards the blocking tests below.
    const denied = await rest('PUT', '/api/v1/system/lockdown', { from: '127.0.0.4', body: { enabled: false } });
    assert.equal(denied.status, 401);
    const lifted = await rest('PUT', '/api/v1/system/lockdown', { apiKey: ADMIN_KEY, body: { enabled: false } });
    assert.deepEqual([lifted.status, lifted.body], [200, { enabled: false }]);
    assert.equal((await rest('GET', '/api/v1/agents', { apiKey: ADMIN_KEY })).status, 200);
    const key = await admin.createKey({ name: 'viewer', roles: ['viewer'] });
    assert.deepEqual(await grpcRefusal(grpcFrom('127.0.0.1', { apiKey: key.api_key }).setLockdown(true)), { code: 'PERMISSION_DENIED', metadata: { permission: 'system:configure' } });
    assert.deepEqual(await admin.setLockdown(true), { enabled: true });
    assert.equal((await rest('GET', '/api/v1/agents', { apiKey: ADMIN_KEY })).body.metadata?.reason, 'lockdown');
    assert.equal((await admin.systemConfig().catch(() => undefined)), undefined, 'system config waits for the lockdown to lift');
    assert.deepEqual(await admin.setLockdown(false), { enabled: false });
    assert.equal((await admin.systemConfig()).lockdown, false);
  });
});

describe('rate limits', () => {
  test('per source (the principal): past the second\'s rate and the burst, RATE_LIMITED with Retry-After, on both doors', async () => {
    const admin = grpcFrom('127.0.0.1', { apiKey: ADMIN_KEY });
    const rested = await admin.createKey({ name: 'busy-rest', roles: ['viewer'], rate_limit_per_hour: 10_000_000 });
    const answers = await Promise.all(Array.from({ length: 150 }, () => rest('GET', '/api/v1/agents', { apiKey: rested.api_key })));
    const limited = answers.filter((a) => a.status === 429);
    assert.ok(limited.length > 0 && answers.some((a) => a.status === 200), answers.map((a) => a.status).join(','));
    for (const answer of limited) {
      assert.deepEqual([answer.body.code, answer.body.metadata?.reason], ['RATE_LIMITED', 'rate_limit']);
      assert.ok(Number(answer.headers['retry-after']) >= 1, String(answer.headers['retry-after']));
    }
    const grpcKey = await admin.createKey({ name: 'busy-grpc', roles: ['viewer'], rate_limit_per_hour: 10_000_000 });
    const busy = grpcFrom('127.0.0.1', { apiKey: grpcKey.api_key });
    const outcomes = await Promise.allSettled(Array.from({ length: 150 }, () => busy.list()));
    const refusals = await Promise.all(outcomes.filter((o) => o.status === 'rejected').map((o) => grpcRefusal(Promise.reject((o as PromiseRejectedResult).reason))));
    assert.ok(refusals.length > 0, 'some were limited');
    for (const refusal of refusals) {
      assert.deepEqual([refusal.code, refusal.metadata.reason], ['RATE_LIMITED', 'rate_limit']);
      assert.ok(Number(refusal.metadata.retry_after_seconds) >= 1);
    }
  });

  test('per key: its own hourly rate (a sixtieth a minute) plus burst_limit, then RATE_LIMITED (key_rate_limit), on both doors', async () => {
    const admin = grpcFrom('127.0.0.1', { apiKey: ADMIN_KEY });
    for (const door of ['rest', 'grpc'] as const) {
      const slow = await admin.createKey({ name: `slow-${door}`, roles: ['viewer'], rate_limit_per_hour: 60 });
      const client = grpcFrom('127.0.0.1', { apiKey: slow.api_key });
      for (let i = 0; i < 3; i++) {
        if (door === 'rest') assert.equal((await rest('GET', '/api/v1/agents', { apiKey: slow.api_key })).status, 200, `call ${i + 1}`);
        else await client.list();
      }
      if (door === 'rest') {
        const limited = await rest('GET', '/api/v1/agents', { apiKey: slow.api_key });
        assert.deepEqual([limited.status, limited.body.metadata?.reason, limited.body.metadata?.key_id], [429, 'key_rate_limit', slow.key_id]);
        assert.ok(Number(limited.headers['retry-after']) >= 1);
      } else {
        const refusal = await grpcRefusal(client.list());
        assert.deepEqual([refusal.code, refusal.metadata.reason, refusal.metadata.key_id], ['RATE_LIMITED', 'key_rate_limit', slow.key_id]);
      }
    }
  });
});

describe('failed-authentication blocking', () => {
  test('REST: the fourth failure blocks the address; every call from it, valid or not, on either door, is then RATE_LIMITED (auth_blocked)', async () => {
    for (let i = 0; i < 4; i++) assert.equal((await rest('GET', '/api/v1/agents', { from: '127.0.0.1', apiKey: BAD_KEY('restrestrestrest') })).status, 401, `failure ${i + 1}`);
    const blocked = await rest('GET', '/api/v1/agents', { from: '127.0.0.1', apiKey: ADMIN_KEY });
    assert.deepEqual([blocked.status, blocked.body.code, blocked.body.metadata?.reason], [429, 'RATE_LIMITED', 'auth_blocked']);
    const retry = Number(blocked.headers['retry-after']);
    assert.ok(retry > 880 && retry <= 900, `Retry-After ${retry} (block_duration 15m)`);
    const refusal = await grpcRefusal(grpcFrom('127.0.0.1', { apiKey: ADMIN_KEY }).list());
    assert.deepEqual([refusal.code, refusal.metadata.reason], ['RATE_LIMITED', 'auth_blocked']);
    assert.equal((await rest('GET', '/api/v1/health', { from: '127.0.0.1' })).status, 200, 'health stays open');
  });

  test('gRPC: failures from ::1 block ::1 and the key id they named, from any address; other sources go on', async () => {
    const bad = grpcFrom('::1', { apiKey: BAD_KEY('grpcgrpcgrpcgrpc') });
    for (let i = 0; i < 4; i++) assert.equal((await grpcRefusal(bad.list())).code, 'UNAUTHENTICATED', `failure ${i + 1}`);
    const blocked = await grpcRefusal(grpcFrom('::1', { apiKey: ADMIN_KEY }).list());
    assert.deepEqual([blocked.code, blocked.metadata.reason], ['RATE_LIMITED', 'auth_blocked']);
    assert.ok(Number(blocked.metadata.retry_after_seconds) > 880);
    assert.equal((await rest('GET', '/api/v1/agents', { from: '::1', apiKey: ADMIN_KEY })).body.metadata?.reason, 'auth_blocked');
    const keyBlocked = await rest('GET', '/api/v1/agents', { from: '127.0.0.2', apiKey: BAD_KEY('grpcgrpcgrpcgrpc') });
    assert.deepEqual([keyBlocked.status, keyBlocked.body.metadata?.reason], [429, 'auth_blocked']);
    assert.equal((await rest('GET', '/api/v1/agents', { from: '127.0.0.2', apiKey: ADMIN_KEY })).status, 200, 'another address with another key');
  });
});
