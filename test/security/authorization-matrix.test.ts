/**
 * The authorization matrix of issue 42 over both doors: every operation ×
 * every role × every credential case. The expected outcome of each case is
 * written out below from DESIGN.md section 9's tables, not read from the
 * code's. "allowed" means the call passed the security steps (its answer may
 * still be a NOT_FOUND or INVALID_ARGUMENT of the operation itself: the
 * requests are chosen so that allowed calls change nothing).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, createPrivateKey, createPublicKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';
import { decodeJwt, SignJWT } from 'jose';
import { WebSocket } from 'ws';
import { createSimulatedClock } from '../../supervisors/clock-simulated.js';
import { RemoteError, type ClientCredentials, type GrpcClient } from '../../src/api/grpc/grpc-client.js';
import { ADMIN_KEY, startSecuredServer, type SecuredServer } from './secured-server.js';

/** DESIGN.md section 9, the roles. */
const ROLE_PERMISSIONS: Readonly<Record<string, readonly string[]>> = {
  admin: ['agent:create', 'agent:update', 'agent:view', 'metrics:view', 'agent:delete', 'system:configure', 'audit:view'],
  operator: ['agent:create', 'agent:update', 'agent:view', 'metrics:view'],
  viewer: ['agent:view', 'metrics:view'],
  agent: ['message:send', 'message:receive'],
  none: [],
};
const ROLES = Object.keys(ROLE_PERMISSIONS);

/** DESIGN.md section 9, the operations: a permission, open, or an exchange of the caller's credential. */
const OPERATION_NEEDS: Readonly<Record<string, string>> = {
  DeployAgent: 'agent:create',
  UndeployAgent: 'agent:delete',
  ListAgents: 'agent:view',
  GetAgent: 'agent:view',
  RestartAgent: 'agent:update',
  UpdateAgent: 'agent:update',
  GetAgentLogs: 'agent:view',
  FollowAgentLogs: 'agent:view',
  RecentMessages: 'agent:view',
  SendMessage: 'message:send',
  CallAgent: 'message:send',
  SubscribeMessages: 'message:receive',
  Metrics: 'metrics:view',
  CreateKey: 'system:configure',
  ListKeys: 'system:configure',
  RevokeKey: 'system:configure',
  RotateKey: 'system:configure',
  GetSystemConfig: 'system:configure',
  SetLockdown: 'system:configure',
  ListAudit: 'audit:view',
  Health: 'open',
  CreateToken: 'exchange',
};

type Outcome = 'allowed' | 'unauthenticated' | 'denied';

function expected(operation: string, role: string, credentialValid: boolean): Outcome {
  const needs = OPERATION_NEEDS[operation] as string;
  if (needs === 'open') return 'allowed';
  if (!credentialValid) return 'unauthenticated';
  if (needs === 'exchange') return 'allowed';
  return (ROLE_PERMISSIONS[role] ?? []).includes(needs) ? 'allowed' : 'denied';
}

const UNKNOWN_AGENT = '01ARZ3NDEKTSV4RRFFQ69G5FAV';
const UNKNOWN_KEY = 'aaaaaaaaaaaaaaaa';
const DAY = 86_400_000;

interface Credential {
  readonly name: string;
  readonly valid: boolean;
  readonly presented: ClientCredentials;
}

let s: SecuredServer;
const credentials = new Map<string, Credential[]>();

function b64(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

before(async () => {
  const clock = createSimulatedClock();
  s = await startSecuredServer({ start: { clock }, env: { SVC_SECURITY_AUTO_BLOCK_SUSPICIOUS_IPS: 'false' }, flags: ['--server.rate_limit_per_second=100000', '--security.rate_limit_per_key=10000000'] });
  const admin = s.grpc({ apiKey: ADMIN_KEY });
  const key = (name: string, roles: string[]) => admin.createKey({ name, roles });
  const roleList = (role: string): string[] => (role === 'none' ? [] : [role]);
  // Rotated before the clock moves on past the grace period (7 days).
  const pastGrace = new Map<string, string>();
  for (const role of ROLES) {
    const made = await key(`past-${role}`, roleList(role));
    await admin.rotateKey(made.key_id);
    pastGrace.set(role, made.api_key);
  }
  await clock.advance(8 * DAY);
  const signing = createPrivateKey(readFileSync(join(s.dir, 'security', 'jwt-rs256.pem')));
  const publicPem = createPublicKey(signing).export({ type: 'spki', format: 'pem' }).toString();
  for (const role of ROLES) {
    const valid = await key(`valid-${role}`, roleList(role));
    const revoked = await key(`revoked-${role}`, roleList(role));
    await admin.revokeKey(revoked.key_id);
    const within = await key(`within-${role}`, roleList(role));
    await admin.rotateKey(within.key_id);
    const token = (await s.grpc({ apiKey: valid.api_key }).createToken()).access_token;
    const now = decodeJwt(token).iat as number;
    const claims = { roles: roleList(role), sub: `key:${valid.key_id}` };
    const signed = (over: Record<string, unknown>) =>
      new SignJWT({ ...claims, ...over }).setProtectedHeader({ alg: 'RS256' }).sign(signing);
    const good = { iss: 'svc', aud: 'svc', exp: now + 600 };
    const forged = await signed(good);
    const hs = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ ...claims, ...good })}`;
    credentials.set(role, [
      { name: 'no credential', valid: false, presented: {} },
      { name: 'expired', valid: false, presented: { token: await signed({ ...good, exp: now - 60 }) } },
      { name: 'wrong audience', valid: false, presented: { token: await signed({ ...good, aud: 'another-service' }) } },
      { name: 'wrong issuer', valid: false, presented: { token: await signed({ ...good, iss: 'https://evil.example' }) } },
      { name: 'bad signature', valid: false, presented: { token: `${forged.slice(0, -6)}${forged.endsWith('AAAAAA') ? 'BBBBBB' : 'AAAAAA'}` } },
      { name: 'alg none', valid: false, presented: { token: `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ ...claims, ...good })}.` } },
      { name: 'HS256 signed with the RS256 public key', valid: false, presented: { token: `${hs}.${createHmac('sha256', publicPem).update(hs).digest('base64url')}` } },
      { name: 'revoked key', valid: false, presented: { apiKey: revoked.api_key } },
      { name: 'rotated key within its grace period', valid: true, presented: { apiKey: within.api_key } },
      { name: 'rotated key past its grace period', valid: false, presented: { apiKey: pastGrace.get(role) as string } },
      { name: 'valid key', valid: true, presented: { apiKey: valid.api_key } },
      { name: 'valid token', valid: true, presented: { token } },
    ]);
  }
});
after(() => s.stop());

function headersOf(presented: ClientCredentials): Record<string, string> {
  return {
    ...(presented.apiKey === undefined ? {} : { 'x-api-key': presented.apiKey }),
    ...(presented.token === undefined ? {} : { authorization: `Bearer ${presented.token}` }),
  };
}

const REST: Readonly<Record<string, [method: string, path: string, body?: unknown]>> = {
  DeployAgent: ['POST', '/api/v1/agents', {}],
  UndeployAgent: ['DELETE', `/api/v1/agents/${UNKNOWN_AGENT}`],
  ListAgents: ['GET', '/api/v1/agents'],
  GetAgent: ['GET', `/api/v1/agents/${UNKNOWN_AGENT}`],
  RestartAgent: ['POST', `/api/v1/agents/${UNKNOWN_AGENT}/restart`],
  UpdateAgent: ['PATCH', `/api/v1/agents/${UNKNOWN_AGENT}`, { capabilities: ['x'] }],
  GetAgentLogs: ['GET', `/api/v1/agents/${UNKNOWN_AGENT}/logs`],
  RecentMessages: ['GET', `/api/v1/agents/${UNKNOWN_AGENT}/messages`],
  SendMessage: ['POST', '/api/v1/messages', { receiver: UNKNOWN_AGENT, message_type: 'inform' }],
  CallAgent: ['POST', `/api/v1/agents/${UNKNOWN_AGENT}/call`, { message_type: 'inform' }],
  Metrics: ['GET', '/api/v1/metrics'],
  CreateKey: ['POST', '/api/v1/keys', {}],
  ListKeys: ['GET', '/api/v1/keys'],
  RevokeKey: ['DELETE', `/api/v1/keys/${UNKNOWN_KEY}`],
  RotateKey: ['POST', `/api/v1/keys/${UNKNOWN_KEY}/rotate`],
  GetSystemConfig: ['GET', '/api/v1/system/config'],
  SetLockdown: ['PUT', '/api/v1/system/lockdown', { enabled: false }],
  ListAudit: ['GET', '/api/v1/audit?limit=1'],
  Health: ['GET', '/api/v1/health'],
  CreateToken: ['POST', '/api/v1/auth/token', {}],
};

async function viaRest(operation: string, presented: ClientCredentials): Promise<Outcome> {
  if (operation === 'SubscribeMessages') return viaWebSocket(presented, '/api/v1/messages');
  if (operation === 'FollowAgentLogs') return viaWebSocket(presented, `/api/v1/agents/${UNKNOWN_AGENT}/logs/follow`);
  const [method, path, body] = REST[operation] as [string, string, unknown];
  const answer = await fetch(s.base + path, {
    method,
    headers: { ...headersOf(presented), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const json = (await answer.json()) as { metadata?: Record<string, string> };
  if (answer.status === 401) {
    assert.equal(answer.headers.get('www-authenticate'), 'Bearer', `${operation}: 401 names the scheme`);
    return 'unauthenticated';
  }
  if (answer.status === 403) {
    assert.equal(json.metadata?.permission, OPERATION_NEEDS[operation], `${operation}: 403 names the permission`);
    return 'denied';
  }
  assert.ok(answer.status < 500 && answer.status !== 429, `${operation}: ${answer.status} ${JSON.stringify(json)}`);
  return 'allowed';
}

/** An upgrade; a 404 (an unknown agent's logs) came after the security steps, so the call was allowed. */
function viaWebSocket(presented: ClientCredentials, path: string): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${s.base.replace('http', 'ws')}${path}`, { headers: headersOf(presented) });
    ws.once('open', () => {
      ws.close();
      resolve('allowed');
    });
    ws.once('unexpected-response', (_req, res) => {
      res.resume();
      ws.terminate();
      if (res.statusCode === 401) resolve('unauthenticated');
      else if (res.statusCode === 403) resolve('denied');
      else if (res.statusCode === 404) resolve('allowed');
      else reject(new Error(`upgrade answered ${String(res.statusCode)}`));
    });
    ws.once('error', () => undefined);
  });
}

const GRPC: Readonly<Record<string, (client: GrpcClient) => Promise<unknown>>> = {
  DeployAgent: (c) => c.deploy({ name: '', wasm_module: new Uint8Array() }),
  UndeployAgent: (c) => c.undeploy(UNKNOWN_AGENT),
  ListAgents: (c) => c.list(),
  GetAgent: (c) => c.get(UNKNOWN_AGENT),
  RestartAgent: (c) => c.restart(UNKNOWN_AGENT),
  UpdateAgent: (c) => c.update({ agent_id: UNKNOWN_AGENT, capabilities: ['x'] }),
  GetAgentLogs: (c) => c.logs(UNKNOWN_AGENT),
  SendMessage: (c) => c.send({ receiver: UNKNOWN_AGENT, message_type: 'inform' }),
  CallAgent: (c) => c.call({ receiver: UNKNOWN_AGENT, message_type: 'inform' }),
  Metrics: (c) => c.metrics(),
  CreateKey: (c) => c.createKey({ name: '', roles: [] }),
  ListKeys: (c) => c.listKeys(),
  RevokeKey: (c) => c.revokeKey(UNKNOWN_KEY),
  RotateKey: (c) => c.rotateKey(UNKNOWN_KEY),
  GetSystemConfig: (c) => c.systemConfig(),
  SetLockdown: (c) => c.setLockdown(false),
  ListAudit: (c) => c.listAudit({ limit: 1 }),
  Health: (c) => c.health(),
  CreateToken: (c) => c.createToken(),
};

function stream(client: GrpcClient): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const call = client.subscribe({});
    call.once('metadata', () => {
      call.cancel();
      resolve('allowed');
    });
    call.once('error', (error: ServiceError) => {
      if (error.code === GrpcStatus.UNAUTHENTICATED) resolve('unauthenticated');
      else if (error.code === GrpcStatus.PERMISSION_DENIED) resolve('denied');
      else if (error.code !== GrpcStatus.CANCELLED) reject(error);
    });
  });
}

/** FollowAgentLogs of an unknown agent: allowed calls end NOT_FOUND, after the security steps. */
function followLogs(client: GrpcClient): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const call = client.followLogs(UNKNOWN_AGENT);
    call.once('error', (error: ServiceError) => {
      if (error.code === GrpcStatus.UNAUTHENTICATED) resolve('unauthenticated');
      else if (error.code === GrpcStatus.PERMISSION_DENIED) resolve('denied');
      else if (error.code === GrpcStatus.NOT_FOUND) resolve('allowed');
      else reject(error);
    });
  });
}

async function viaGrpc(operation: string, client: GrpcClient): Promise<Outcome> {
  if (operation === 'SubscribeMessages') return stream(client);
  if (operation === 'FollowAgentLogs') return followLogs(client);
  try {
    await (GRPC[operation] as (c: GrpcClient) => Promise<unknown>)(client);
  } catch (err) {
    assert.ok(err instanceof RemoteError, String(err));
    if (err.code === 'UNAUTHENTICATED') return 'unauthenticated';
    if (err.code === 'PERMISSION_DENIED') {
      assert.equal(err.body.metadata.permission, OPERATION_NEEDS[operation]);
      return 'denied';
    }
    assert.ok(!['RATE_LIMITED', 'INTERNAL', 'UNAVAILABLE'].includes(err.code), `${operation}: ${JSON.stringify(err.body)}`);
  }
  return 'allowed';
}

test('REST and WebSocket: every operation × role × credential answers as the table says', async () => {
  const mismatches: string[] = [];
  for (const role of ROLES) {
    for (const credential of credentials.get(role) ?? []) {
      await Promise.all(
        Object.keys(OPERATION_NEEDS).map(async (operation) => {
          const got = await viaRest(operation, credential.presented);
          const want = expected(operation, role, credential.valid);
          if (got !== want) mismatches.push(`${operation} ${role} ${credential.name}: ${got}, expected ${want}`);
        }),
      );
    }
  }
  assert.deepEqual(mismatches, []);
});

test('gRPC, streams included: every operation × role × credential answers as the table says', async () => {
  const mismatches: string[] = [];
  const operations = Object.keys(OPERATION_NEEDS).filter((operation) => operation !== 'RecentMessages');
  for (const role of ROLES) {
    for (const credential of credentials.get(role) ?? []) {
      const client = s.grpc(credential.presented);
      await Promise.all(
        operations.map(async (operation) => {
          const got = await viaGrpc(operation, client);
          const want = expected(operation, role, credential.valid);
          if (got !== want) mismatches.push(`${operation} ${role} ${credential.name}: ${got}, expected ${want}`);
        }),
      );
    }
  }
  assert.deepEqual(mismatches, []);
});
