/** Every REST route against the real AgentService, success and error paths. */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { watFixture } from '../../helpers/wat.js';
import { engineOnlyTypeError } from '../../helpers/wasm-bytes.js';
import { call, deployEcho, ECHO_WASM, eventually, startGateway, type Gateway } from './http-fixtures.js';

let gw: Gateway;
before(async () => {
  gw = await startGateway();
});
after(() => gw.stop());

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';

test('POST /api/v1/agents deploys: 201 {agent_id}; lowerCamelCase input reads the same', async () => {
  const snake = await call(gw.base, 'POST', '/api/v1/agents', { name: 'deploy-snake', wasm_module: ECHO_WASM.toString('base64'), capabilities: ['echo'], resources: { memory_limit: 65536 * 16 } });
  assert.equal(snake.status, 201, snake.text);
  assert.match(snake.body.agent_id, /^[0-9A-Z]{26}$/);
  assert.match(snake.headers.get('content-type') ?? '', /^application\/json/);
  const camel = await call(gw.base, 'POST', '/api/v1/agents', { name: 'deploy-camel', wasmModule: ECHO_WASM.toString('base64url'), resources: { cpuShares: 512 } });
  assert.equal(camel.status, 201, camel.text);
  const agent = (await call(gw.base, 'GET', `/api/v1/agents/${snake.body.agent_id}`)).body;
  assert.deepEqual([agent.name, agent.capabilities, agent.resources.memory_limit, agent.module_size], ['deploy-snake', ['echo'], 65536 * 16, ECHO_WASM.length]);
  assert.equal((await call(gw.base, 'GET', `/api/v1/agents/${camel.body.agent_id}`)).body.resources.cpu_shares, 512);
});

test('GET /api/v1/agents/{id}: the Agent in snake_case; unknown id 404 NOT_FOUND', async () => {
  const id = await deployEcho(gw.base, 'get-me');
  const got = await call(gw.base, 'GET', `/api/v1/agents/${id}`);
  assert.equal(got.status, 200);
  assert.deepEqual(Object.keys(got.body).sort(), [
    'agent_id', 'capabilities', 'created_at', 'memory_bytes', 'messages_received', 'messages_sent', 'module_sha256', 'module_size', 'module_version', 'name', 'node_id', 'resources', 'restart_count', 'state', 'throttled_seconds', 'updated_at',
  ]);
  assert.equal(got.body.agent_id, id);
  const missing = await call(gw.base, 'GET', '/api/v1/agents/01J00000000000000000000000', undefined, { 'x-trace-id': TRACE });
  assert.equal(missing.status, 404);
  assert.deepEqual(missing.body, { code: 'NOT_FOUND', message: missing.body.message, trace_id: TRACE, metadata: missing.body.metadata });
});

test('GET /api/v1/agents pages with page_size and page_token', async () => {
  for (const name of ['page-a', 'page-b', 'page-c']) await deployEcho(gw.base, name);
  const seen: string[] = [];
  let token = '';
  for (let pages = 0; pages < 50; pages++) {
    const page = await call(gw.base, 'GET', `/api/v1/agents?pageSize=2${token ? `&page_token=${encodeURIComponent(token)}` : ''}`);
    assert.equal(page.status, 200, page.text);
    assert.ok(page.body.agents.length <= 2);
    seen.push(...page.body.agents.map((a: { name: string }) => a.name));
    token = page.body.next_page_token ?? '';
    if (token === '') break;
  }
  for (const name of ['page-a', 'page-b', 'page-c']) assert.ok(seen.includes(name), name);
  assert.equal(new Set(seen).size, seen.length);
  const bad = await call(gw.base, 'GET', '/api/v1/agents?page_token=garbage');
  assert.equal(bad.status, 400, bad.text);
});

test('DELETE /api/v1/agents/{id}: 200 {}, then the agent is gone', async () => {
  const id = await deployEcho(gw.base, 'undeploy-me');
  const removed = await call(gw.base, 'DELETE', `/api/v1/agents/${id}`);
  assert.deepEqual([removed.status, removed.body], [200, {}]);
  assert.equal((await call(gw.base, 'GET', `/api/v1/agents/${id}`)).status, 404);
  assert.equal((await call(gw.base, 'DELETE', `/api/v1/agents/${id}`)).status, 404);
});

test('SendMessage on both routes: 202 {message_id}; the echo reply shows in the recent messages', async () => {
  const id = await deployEcho(gw.base, 'echo-send');
  const direct = await call(gw.base, 'POST', `/api/v1/agents/${id}/messages`, { message_type: 'request', content: 'one' });
  assert.equal(direct.status, 202, direct.text);
  assert.match(direct.body.message_id, /^[0-9A-Z]{26}$/);
  const viaBody = await call(gw.base, 'POST', '/api/v1/messages', { receiver: id, messageType: 'query-ref', content: '{"n":2}', metadata: { k: 'v' } });
  assert.equal(viaBody.status, 202, viaBody.text);
  const recent = await eventually(async () => {
    const answer = await call(gw.base, 'GET', `/api/v1/agents/${id}/messages`);
    return answer.body.messages?.length >= 4 ? answer : undefined;
  });
  assert.equal(recent.status, 200);
  const messages = recent.body.messages as Array<Record<string, unknown>>;
  assert.deepEqual(messages.filter((m) => m.sender === 'client:anonymous').map((m) => [m.message_type, m.content]), [['request', 'one'], ['query-ref', '{"n":2}']]);
  assert.deepEqual(messages.filter((m) => m.sender === id).map((m) => [m.message_type, m.receiver, m.content]), [['inform', 'client:anonymous', 'one'], ['inform', 'client:anonymous', '{"n":2}']]);
  const informs = await call(gw.base, 'GET', `/api/v1/agents/${id}/messages?message_types=inform`);
  assert.deepEqual(informs.body.messages.map((m: { message_type: string }) => m.message_type), ['inform', 'inform']);
  const systemWide = await call(gw.base, 'GET', `/api/v1/messages?agent_id=${id}&message_types=request`);
  assert.deepEqual(systemWide.body.messages.map((m: { content: string }) => m.content), ['one']);
});

test('SendMessage errors: unknown receiver, receiver in path and body disagree, invalid performative, server-assigned fields', async () => {
  const id = await deployEcho(gw.base, 'echo-errors');
  const unknown = await call(gw.base, 'POST', '/api/v1/agents/01J00000000000000000000000/messages', { message_type: 'inform' });
  assert.equal(unknown.status, 404, unknown.text);
  const mismatch = await call(gw.base, 'POST', `/api/v1/agents/${id}/messages`, { receiver: 'someone-else', message_type: 'inform' });
  assert.deepEqual([mismatch.status, mismatch.body.metadata.field, mismatch.body.metadata.reason], [400, 'receiver', 'path_mismatch']);
  const shout = await call(gw.base, 'POST', `/api/v1/agents/${id}/messages`, { message_type: 'shout' });
  assert.deepEqual([shout.status, shout.body.metadata.reason, shout.body.metadata.value], [400, 'unknown_performative', 'shout']);
  const noReceiver = await call(gw.base, 'POST', '/api/v1/messages', { message_type: 'inform' });
  assert.deepEqual([noReceiver.status, noReceiver.body.metadata.field], [400, 'receiver']);
  const assigned = await call(gw.base, 'POST', '/api/v1/messages', { receiver: id, message_type: 'inform', message_id: 'mine' });
  assert.deepEqual([assigned.status, assigned.body.metadata.reason], [400, 'server_assigned']);
});

test('GET /api/v1/messages without Upgrade and without an agent_id points at the stream', async () => {
  const answer = await call(gw.base, 'GET', '/api/v1/messages');
  assert.deepEqual([answer.status, answer.body.code, answer.body.metadata.reason], [400, 'INVALID_ARGUMENT', 'upgrade_required']);
  const unknown = await call(gw.base, 'GET', '/api/v1/agents/01J00000000000000000000000/messages');
  assert.equal(unknown.status, 404);
});

test('GET /api/v1/health echoes X-Trace-Id as sent in the body and the header', async () => {
  const answer = await call(gw.base, 'GET', '/api/v1/health', undefined, { 'X-Trace-Id': TRACE.toUpperCase() });
  assert.equal(answer.status, 200);
  assert.equal(answer.headers.get('x-trace-id'), TRACE.toUpperCase());
  assert.deepEqual(Object.keys(answer.body), ['status', 'version', 'agents', 'trace_id']);
  assert.equal(answer.body.status, 'healthy');
  assert.equal(answer.body.trace_id, TRACE.toUpperCase());
  for (const own of ['health-check-1', '123e4567-e89b-12d3-a456-426614174000', '0'.repeat(32)]) {
    const echoed = await call(gw.base, 'GET', '/api/v1/health', undefined, { 'X-Trace-Id': own });
    assert.equal(echoed.body.trace_id, own, `${own} is echoed as sent`);
    assert.equal(echoed.headers.get('x-trace-id'), own);
  }
  const missing = await call(gw.base, 'GET', '/api/v1/agents/01J00000000000000000000000', undefined, { 'X-Trace-Id': 'req-404' });
  assert.equal(missing.status, 404);
  assert.equal(missing.body.trace_id, 'req-404', 'an error body echoes it too');
  // Too long, or with a space, it is no id a response header can echo: the answer names the call's own trace.
  for (const unusable of ['x'.repeat(129), 'two words']) {
    const fresh = await call(gw.base, 'GET', '/api/v1/health', undefined, { 'X-Trace-Id': unusable });
    assert.match(fresh.body.trace_id, /^[0-9a-f]{32}$/);
  }
  assert.equal(answer.body.agents.capacity, gw.config.runtime.max_agents);
  const generated = await call(gw.base, 'GET', '/api/v1/health');
  assert.match(generated.body.trace_id, /^[0-9a-f]{32}$/);
  assert.equal(generated.headers.get('x-trace-id'), generated.body.trace_id);
});

test('GET /api/v1/metrics answers the MetricsResponse shape', async () => {
  const answer = await call(gw.base, 'GET', '/api/v1/metrics');
  assert.equal(answer.status, 200, answer.text);
  assert.deepEqual(Object.keys(answer.body), ['samples']);
  assert.ok(answer.body.samples.length > 0);
  for (const sample of answer.body.samples) {
    assert.deepEqual(Object.keys(sample), ['name', 'labels', 'value']);
    assert.equal(typeof sample.value, 'number');
  }
});

/** One module per rejection reason of the sandbox; each surfaces as 422 INVALID_MODULE with its metadata. */
const REJECTED: Array<{ file: string; features?: Record<string, boolean>; expect: Record<string, string> }> = [
  { file: 'forbidden-import-module.wat', expect: { reason: 'forbidden_import', import: 'env.abort' } },
  { file: 'import-signature.wat', expect: { reason: 'import_signature', import: 'wasi_snapshot_preview1.fd_write' } },
  { file: 'imported-memory.wat', expect: { reason: 'imported_memory' } },
  { file: 'imported-table.wat', expect: { reason: 'imported_table' } },
  { file: 'imported-global.wat', expect: { reason: 'imported_global' } },
  { file: 'simd-instruction.wat', features: { simd: true }, expect: { reason: 'forbidden_feature', feature: 'simd' } },
  { file: 'missing-handle.wat', expect: { reason: 'missing_export', export: 'handle' } },
  { file: 'handle-global.wat', expect: { reason: 'export_kind', export: 'handle' } },
  { file: 'memory-no-maximum.wat', expect: { reason: 'memory_no_maximum' } },
  { file: 'memory-over-limit.wat', expect: { reason: 'memory_limit' } },
  { file: 'reserved-export.wat', expect: { reason: 'reserved_export' } },
];

test('every rejection reason of the sandbox is 422 INVALID_MODULE with its metadata', async () => {
  for (const { file, features, expect } of REJECTED) {
    const module = Buffer.from(await watFixture(`reject/${file}`, features ?? {}));
    const answer = await call(gw.base, 'POST', '/api/v1/agents', { name: file.replace('.wat', ''), wasm_module: module.toString('base64') });
    assert.equal(answer.status, 422, `${file}: ${answer.text}`);
    assert.equal(answer.body.code, 'INVALID_MODULE');
    for (const [key, value] of Object.entries(expect)) assert.equal(answer.body.metadata[key], value, `${file} ${key}`);
  }
  const garbage = await call(gw.base, 'POST', '/api/v1/agents', { name: 'garbage', wasm_module: 'AAECAw==' });
  assert.deepEqual([garbage.status, garbage.body.metadata.reason], [422, 'malformed']);
  // No .wat fixture can carry this reason: wabt validates what it assembles.
  const engineOnly = await call(gw.base, 'POST', '/api/v1/agents', { name: 'engine-only-type-error', wasm_module: Buffer.from(engineOnlyTypeError()).toString('base64') });
  assert.equal(engineOnly.status, 422, engineOnly.text);
  assert.deepEqual(engineOnly.body, { code: 'INVALID_MODULE', message: 'the module is not valid WebAssembly', trace_id: engineOnly.body.trace_id, metadata: { reason: 'invalid_module' } });
  assert.match(engineOnly.body.trace_id, /^[0-9a-f]{32}$/);
  assert.equal((await call(gw.base, 'GET', '/api/v1/health')).body.status, 'healthy');
});

test('deploy errors: a taken name 409, a missing name 400', async () => {
  await deployEcho(gw.base, 'taken');
  const again = await call(gw.base, 'POST', '/api/v1/agents', { name: 'taken', wasm_module: ECHO_WASM.toString('base64') });
  assert.equal(again.status, 409, again.text);
  const nameless = await call(gw.base, 'POST', '/api/v1/agents', { wasm_module: ECHO_WASM.toString('base64') });
  assert.deepEqual([nameless.status, nameless.body.code], [400, 'INVALID_ARGUMENT']);
});

test('a wrong method on a known path is 405 with Allow (issue 44; it was 404); an unknown path NOT_FOUND', async () => {
  const put = await call(gw.base, 'PUT', '/api/v1/agents/x', {});
  assert.deepEqual([put.status, put.headers.get('allow'), put.body.code, put.body.metadata.allow], [405, 'DELETE, GET, HEAD, PATCH', 'NOT_FOUND', 'DELETE,GET,HEAD,PATCH']);
  const nowhere = await call(gw.base, 'GET', '/api/v1/nowhere');
  assert.deepEqual([nowhere.status, nowhere.body.code], [404, 'NOT_FOUND']);
  assert.match(nowhere.body.trace_id, /^[0-9a-f]{32}$/);
});
