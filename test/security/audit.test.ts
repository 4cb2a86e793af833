/**
 * Audit over both doors against a real server: every event kind is
 * recorded, with the caller's address and user agent, and is queryable; the
 * principal reaches `AgentService` as the sender of a client's messages; and
 * no secret the test used (keys, tokens, client secrets) is anywhere in the
 * log or the database files.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ECHO_WASM } from '../api/http/http-fixtures.js';
import type { AuditRecordJson } from '../../src/security/security-service-types.js';
import { ADMIN_KEY, startSecuredServer, type SecuredServer } from './secured-server.js';

const UA = 'audit-test/1.0';
let s: SecuredServer;
const secrets: string[] = [ADMIN_KEY];

before(async () => {
  s = await startSecuredServer();
});
after(() => s.stop());

async function rest(method: string, path: string, credential: Record<string, string>, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const answer = await fetch(s.base + path, {
    method,
    headers: { 'user-agent': UA, ...credential, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: answer.status, body: (await answer.json()) as Record<string, unknown> };
}

async function audit(query: string): Promise<AuditRecordJson[]> {
  const answer = await rest('GET', `/api/v1/audit?${query}`, { 'x-api-key': ADMIN_KEY });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body.records as AuditRecordJson[];
}

test('every event kind, through both doors, with the source address, the user agent and the trace id', async () => {
  const admin = { 'x-api-key': ADMIN_KEY };
  // admin_action over REST: create, rotate, revoke.
  const made = await rest('POST', '/api/v1/keys', admin, { name: 'worker', roles: ['operator', 'agent'] });
  assert.equal(made.status, 201);
  const worker = made.body as { key_id: string; api_key: string };
  secrets.push(worker.api_key, worker.api_key.split('_').slice(2).join('_'));
  const rotated = (await rest('POST', `/api/v1/keys/${worker.key_id}/rotate`, admin)).body as { api_key: string };
  secrets.push(rotated.api_key);
  // authentication: a success where a credential is exchanged (client credentials here), a failure anywhere.
  const secret = rotated.api_key.split('_').slice(2).join('_');
  const exchanged = await rest('POST', '/api/v1/auth/token', {}, { grant_type: 'client_credentials', client_id: worker.key_id, client_secret: secret });
  assert.equal(exchanged.status, 200, JSON.stringify(exchanged.body));
  const pair = exchanged.body as { access_token: string; refresh_token: string };
  secrets.push(pair.access_token, pair.refresh_token);
  const refreshed = (await rest('POST', '/api/v1/auth/refresh', {}, { refresh_token: pair.refresh_token })).body as { access_token: string; refresh_token: string };
  secrets.push(refreshed.access_token, refreshed.refresh_token);
  assert.equal((await rest('GET', '/api/v1/agents', { 'x-api-key': `svc_${worker.key_id}_${'W'.repeat(43)}` })).status, 401);
  // authorization: a denial.
  const viewer = (await rest('POST', '/api/v1/keys', admin, { name: 'viewer', roles: ['viewer'] })).body as { api_key: string };
  secrets.push(viewer.api_key);
  assert.equal((await rest('DELETE', '/api/v1/agents/01ARZ3NDEKTSV4RRFFQ69G5FAV', { 'x-api-key': viewer.api_key })).status, 403);
  // agent_creation and agent_deletion over gRPC, with the worker's token.
  const grpc = s.grpc({ token: refreshed.access_token });
  const { agent_id } = await grpc.deploy({ name: 'audited', wasm_module: ECHO_WASM });
  await s.grpc({ apiKey: ADMIN_KEY }).undeploy(agent_id);
  // configuration_change over gRPC.
  await s.grpc({ apiKey: ADMIN_KEY }).setLockdown(false);
  await rest('DELETE', `/api/v1/keys/${worker.key_id}`, admin);

  const records = await audit('limit=1000');
  const kinds = new Set(records.map((r) => r.event));
  assert.deepEqual([...kinds].sort(), ['admin_action', 'agent_creation', 'agent_deletion', 'authentication', 'authorization', 'configuration_change']);
  for (const record of records) {
    assert.equal(record.source_ip, '127.0.0.1', JSON.stringify(record));
    assert.match(record.trace_id, /^[0-9a-f]{32}$/);
    assert.match(record.time, /^\d{4}-\d\d-\d\dT/);
  }
  const one = (event: string, operation: string, outcome: string, resource?: string) =>
    records.find((r) => r.event === event && r.operation === operation && r.outcome === outcome && (resource === undefined || r.resource === resource));
  assert.deepEqual(pick(one('admin_action', 'CreateKey', 'success', `key:${worker.key_id}`)), { principal: 'key:adminadminadmin2', roles: ['admin'], resource: `key:${worker.key_id}`, user_agent: UA, reason: '' });
  assert.deepEqual(pick(one('admin_action', 'RotateKey', 'success')), { principal: 'key:adminadminadmin2', roles: ['admin'], resource: `key:${worker.key_id}`, user_agent: UA, reason: '' });
  assert.equal(one('admin_action', 'RevokeKey', 'success')?.resource, `key:${worker.key_id}`);
  assert.deepEqual(pick(one('authentication', 'CreateToken', 'success')), { principal: `key:${worker.key_id}`, roles: ['operator', 'agent'], resource: '', user_agent: UA, reason: '' });
  assert.equal(one('authentication', 'RefreshToken', 'success')?.principal, `key:${worker.key_id}`);
  assert.deepEqual(pick(one('authentication', 'ListAgents', 'failure')), { principal: '', roles: [], resource: `key:${worker.key_id}`, user_agent: UA, reason: 'wrong_secret' });
  assert.deepEqual(pick(one('authorization', 'UndeployAgent', 'failure')), { principal: records.find((r) => r.event === 'authorization')?.principal, roles: ['viewer'], resource: '', user_agent: UA, reason: 'agent:delete' });
  const created = one('agent_creation', 'DeployAgent', 'success');
  assert.deepEqual([created?.principal, created?.resource], [`key:${worker.key_id}`, agent_id]);
  assert.match(created?.user_agent ?? '', /^grpc-node-js\//);
  assert.deepEqual([one('agent_deletion', 'UndeployAgent', 'success')?.resource, one('configuration_change', 'SetLockdown', 'success')?.resource], [agent_id, 'lockdown']);
});

function pick(record: AuditRecordJson | undefined): Record<string, unknown> {
  assert.ok(record, 'the record exists');
  return { principal: record.principal, roles: record.roles, resource: record.resource, user_agent: record.user_agent, reason: record.reason };
}

test('the audit query filters by event, principal and time, newest first, both doors', async () => {
  const failures = await audit('event=authentication&limit=5');
  assert.ok(failures.length > 0 && failures.every((r) => r.event === 'authentication'));
  const times = failures.map((r) => Date.parse(r.time));
  assert.deepEqual(times, [...times].sort((a, b) => b - a));
  const mine = await s.grpc({ apiKey: ADMIN_KEY }).listAudit({ principal: 'key:adminadminadmin2', limit: 1000 });
  assert.ok(mine.records.length > 0 && mine.records.every((r) => r.principal === 'key:adminadminadmin2'));
  assert.deepEqual(await audit(`since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`), []);
  const bad = await rest('GET', '/api/v1/audit?event=everything', { 'x-api-key': ADMIN_KEY });
  assert.deepEqual([bad.status, (bad.body.metadata as Record<string, string>).field], [400, 'event']);
  assert.equal((await rest('GET', '/api/v1/audit?since=yesterday', { 'x-api-key': ADMIN_KEY })).status, 400);
});

test('a client\'s messages carry its principal as sender, whichever credential and door', async () => {
  const admin = s.grpc({ apiKey: ADMIN_KEY });
  const key = await admin.createKey({ name: 'messenger', roles: ['operator', 'agent'] });
  secrets.push(key.api_key);
  const viaKey = s.grpc({ apiKey: key.api_key });
  const { agent_id } = await viaKey.deploy({ name: 'principal-echo', wasm_module: ECHO_WASM });
  await viaKey.send({ receiver: agent_id, message_type: 'request', content: 'by key' });
  const token = (await viaKey.createToken()).access_token;
  secrets.push(token);
  const sent = await rest('POST', `/api/v1/agents/${agent_id}/messages`, { authorization: `Bearer ${token}` }, { message_type: 'request', content: 'by token' });
  assert.equal(sent.status, 202);
  let recent: Array<{ sender: string; content: string }> = [];
  for (let i = 0; i < 200 && recent.filter((m) => m.sender.startsWith('client:')).length < 2; i++) {
    recent = (await rest('GET', `/api/v1/agents/${agent_id}/messages`, { 'x-api-key': key.api_key })).body.messages as typeof recent;
  }
  assert.deepEqual(recent.filter((m) => m.sender.startsWith('client:')).map((m) => [m.sender, m.content]), [
    [`client:key:${key.key_id}`, 'by key'],
    [`client:key:${key.key_id}`, 'by token'],
  ]);
  await admin.undeploy(agent_id);
});

test('no secret the test used is in the log or in the database files', async () => {
  s.server.security.audit.flush();
  const log = s.log();
  assert.match(log, /"msg":"http request"/, 'the log was written, access lines included');
  const files = readdirSync(s.dir).filter((name) => name.startsWith('svc.db')).map((name) => readFileSync(join(s.dir, name)));
  assert.ok(files.length >= 1);
  for (const secret of secrets) {
    assert.ok(secret.length >= 20, secret);
    assert.ok(!log.includes(secret), `the log holds a secret: ${secret.slice(0, 12)}…`);
    for (const file of files) assert.equal(file.indexOf(secret), -1, `a database file holds a secret: ${secret.slice(0, 12)}…`);
  }
});
