/**
 * The agent's `memory_limit` against its module's memory, through the real
 * deploy path (DESIGN.md section 2, "Memory"): with `lower_memory_maximum`
 * off, a maximum above the limit is refused at deploy with INVALID_MODULE;
 * with it on, the maximum is lowered to the limit, so `memory.grow` past the
 * limit returns -1. An initial memory above the limit is refused either way.
 * Before, such a deploy succeeded and the executor capped the agent silently.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { status } from '@grpc/grpc-js';
import { ask } from '../agents/agent-fixtures.js';
import { compile, grower } from '../agents/agent-wat.js';
import { assertError, failure, startGrpcTestServer, SUITE_TIMEOUT, type GrpcTestServer } from '../api/grpc/grpc-harness.js';
import { call, ECHO_WASM, startGateway, type Gateway } from '../api/http/http-fixtures.js';

const PAGE = 65_536;
/** The examples declare 1 page initial, 16 pages maximum (scripts/build-examples.ts). */
const EXAMPLE_MAXIMUM = '16';

describe('lower_memory_maximum false (the default): a module over the agent memory_limit is refused at deploy', SUITE_TIMEOUT, () => {
  let s: GrpcTestServer;
  let gw: Gateway;
  before(async () => {
    [s, gw] = await Promise.all([startGrpcTestServer(), startGateway()]);
  });
  after(() => Promise.all([s.stop(), gw.stop()]));

  it('gRPC: a maximum over memory_limit is INVALID_MODULE naming the limit and the maximum', async () => {
    const error = await failure(s.client.deploy({ name: 'echo-1-page', wasm_module: ECHO_WASM, resources: { memory_limit: PAGE } }));
    assertError(error, 'INVALID_MODULE', status.INVALID_ARGUMENT, { reason: 'agent_memory_limit', limit: '1', memory_limit: String(PAGE), maximum: EXAMPLE_MAXIMUM });
    assert.deepEqual(Object.keys(error.body.metadata).sort(), ['limit', 'maximum', 'memory_limit', 'reason']);
  });

  it('gRPC: an initial memory over memory_limit is INVALID_MODULE naming the initial size', async () => {
    const error = await failure(s.client.deploy({ name: 'initial-4', wasm_module: await compile(grower(4, 8)), resources: { memory_limit: 2 * PAGE } }));
    assertError(error, 'INVALID_MODULE', status.INVALID_ARGUMENT, { reason: 'agent_memory_limit', limit: '2', memory_limit: String(2 * PAGE), initial: '4' });
  });

  it('REST: the same refusal is 422 with the same metadata', async () => {
    const answer = await call(gw.base, 'POST', '/api/v1/agents', { name: 'echo-1-page', wasm_module: ECHO_WASM.toString('base64'), resources: { memory_limit: PAGE } });
    assert.equal(answer.status, 422, answer.text);
    assert.equal(answer.body.code, 'INVALID_MODULE');
    assert.deepEqual(answer.body.metadata, { reason: 'agent_memory_limit', limit: '1', memory_limit: String(PAGE), maximum: EXAMPLE_MAXIMUM });
  });

  it('the servers are still up: nothing was deployed, and a limit that fits deploys and answers', async () => {
    assert.equal((await s.client.list()).agents.length, 0);
    assert.equal((await call(gw.base, 'GET', '/api/v1/agents')).body.agents.length, 0);
    assert.equal((await s.client.health()).status, 'healthy');
    const { agent_id } = await s.client.deploy({ name: 'echo-16-pages', wasm_module: ECHO_WASM, resources: { memory_limit: 16 * PAGE } });
    assert.equal((await ask(s.t, s.t.events(), agent_id, 'fits')).content, 'fits');
    const rest = await call(gw.base, 'POST', '/api/v1/agents', { name: 'echo-default', wasm_module: ECHO_WASM.toString('base64') });
    assert.equal(rest.status, 201, rest.text);
  });
});

describe('lower_memory_maximum true: the maximum is lowered to the agent memory_limit', SUITE_TIMEOUT, () => {
  let s: GrpcTestServer;
  before(async () => {
    s = await startGrpcTestServer({ 'runtime.lower_memory_maximum': 'true' });
  });
  after(() => s.stop());

  it('deploys a module whose maximum is over memory_limit; memory.grow returns -1 at the limit', async () => {
    const module = await compile(grower(1, 16));
    const limited = (await s.client.deploy({ name: 'grower-2-pages', wasm_module: module, resources: { memory_limit: 2 * PAGE } })).agent_id;
    const unlimited = (await s.client.deploy({ name: 'grower-default', wasm_module: module })).agent_id;
    const events = s.t.events();
    assert.equal((await ask(s.t, events, limited, 'grow')).content, '2', 'grows to its memory_limit, not to the module maximum');
    assert.equal((await ask(s.t, events, unlimited, 'grow')).content, '16', 'without a lower limit, to the module maximum');
    assert.equal((await s.client.get(limited)).memory_bytes, 2 * PAGE);
  });

  it('deploys the echo example with a 1-page memory_limit', async () => {
    const { agent_id } = await s.client.deploy({ name: 'echo-1-page', wasm_module: ECHO_WASM, resources: { memory_limit: PAGE } });
    assert.equal((await ask(s.t, s.t.events(), agent_id, 'small')).content, 'small');
    assert.equal((await s.client.get(agent_id)).state, 'running');
  });

  it('still refuses an initial memory over memory_limit: it cannot be lowered', async () => {
    const error = await failure(s.client.deploy({ name: 'initial-4', wasm_module: await compile(grower(4, 8)), resources: { memory_limit: 2 * PAGE } }));
    assertError(error, 'INVALID_MODULE', status.INVALID_ARGUMENT, { reason: 'agent_memory_limit', limit: '2', memory_limit: String(2 * PAGE), initial: '4' });
  });
});
