/**
 * Every RPC of svc.v1.ManagementService over real loopback gRPC against the
 * real server: the success path, then the error paths, which must carry the
 * right status and the `svc-error-bin` trailer, never INTERNAL, and leave the
 * server up.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Metadata, status } from '@grpc/grpc-js';
import { example } from '../../agents/agent-fixtures.js';
import type { ErrorCode } from '../../../src/errors/svc-error.js';
import { VERSION } from '../../../src/version.js';
import { assertError, failure, rawCall, rawClient, startGrpcTestServer, SUITE_TIMEOUT, type GrpcTestServer } from './grpc-harness.js';

const echo = example('echo');

describe('gRPC ManagementService', SUITE_TIMEOUT, () => {
  let s: GrpcTestServer;
  before(async () => {
    s = await startGrpcTestServer({ 'runtime.max_agents': 50 });
  });
  after(() => s.stop());

  it('binds an ephemeral loopback port', () => {
    assert.match(s.address, /^127\.0\.0\.1:\d+$/);
    assert.notEqual(s.address, '127.0.0.1:0');
  });

  it('Health: healthy, the version, the capacity, and the trace id the client gave', async () => {
    const trace = '0af7651916cd43dd8448eb211c80319c';
    const health = await s.client.health({ traceId: trace });
    assert.deepEqual(health, { status: 'healthy', version: VERSION, agents: { running: health.agents.running, capacity: 50 }, trace_id: trace });
  });

  it('Health: a new trace id for every call that gave none', async () => {
    const [a, b] = await Promise.all([s.client.health(), s.client.health()]);
    assert.match(a.trace_id, /^[0-9a-f]{32}$/);
    assert.notEqual(a.trace_id, b.trace_id);
  });

  it('DeployAgent, GetAgent, ListAgents, UndeployAgent', async () => {
    const { agent_id } = await s.client.deploy({ name: 'echo-rpc', wasm_module: echo, capabilities: ['echo', 'test'], resources: { memory_limit: 1 << 20 } });
    assert.match(agent_id, /^[0-9A-Z]{26}$/);

    const agent = await s.client.get(agent_id);
    assert.equal(agent.agent_id, agent_id);
    assert.equal(agent.name, 'echo-rpc');
    assert.deepEqual(agent.capabilities, ['echo', 'test']);
    assert.equal(agent.resources.memory_limit, 1 << 20);
    assert.equal(agent.module_size, echo.length);
    assert.equal(agent.module_sha256, createHash('sha256').update(echo).digest('hex'));
    assert.ok(['starting', 'running', 'executing'].includes(agent.state), agent.state);
    assert.equal(typeof agent.messages_received, 'number', 'uint64 fields arrive as numbers');
    assert.match(agent.created_at, /^\d{4}-\d\d-\d\dT/);

    const listed = await s.client.list();
    assert.ok(listed.agents.some((a) => a.agent_id === agent_id));
    assert.equal(listed.next_page_token, '');

    await s.client.undeploy(agent_id);
    assertError(await failure(s.client.get(agent_id)), 'NOT_FOUND', status.NOT_FOUND);
  });

  it('ListAgents pages with page_size and page_token', async () => {
    const ids: string[] = [];
    for (const name of ['page-a', 'page-b', 'page-c']) ids.push((await s.client.deploy({ name, wasm_module: echo })).agent_id);
    const seen: string[] = [];
    let token = '';
    let pages = 0;
    do {
      const page = await s.client.list({ page_size: 2, page_token: token });
      assert.ok(page.agents.length <= 2);
      seen.push(...page.agents.map((a) => a.agent_id));
      token = page.next_page_token;
      pages++;
    } while (token !== '');
    assert.ok(pages >= 2);
    for (const id of ids) assert.ok(seen.includes(id), id);
    for (const id of ids) await s.client.undeploy(id);
  });

  it('SendMessage is accepted with a message id, and the agent answers', async () => {
    const { agent_id } = await s.client.deploy({ name: 'echo-send', wasm_module: echo });
    const stream = s.client.subscribe({ agent_id });
    await new Promise((resolve) => stream.once('metadata', resolve));
    const replies: Array<{ in_reply_to: string; content: string; sender: string }> = [];
    stream.on('data', (m: { in_reply_to: string; content: string; sender: string }) => replies.push(m));
    stream.on('error', () => undefined);
    const { message_id } = await s.client.send({ receiver: agent_id, message_type: 'request', content: 'ping' });
    assert.match(message_id, /^[0-9A-Z]{26}$/);
    while (!replies.some((m) => m.in_reply_to === message_id)) await new Promise((resolve) => setTimeout(resolve, 5));
    const reply = replies.find((m) => m.in_reply_to === message_id);
    assert.equal(reply?.sender, agent_id);
    assert.equal(reply?.content, 'ping');
    stream.cancel();
    await s.client.undeploy(agent_id);
  });

  it('Metrics answers with samples', async () => {
    const { samples } = await s.client.metrics();
    assert.ok(Array.isArray(samples) && samples.length > 0);
    for (const sample of samples) assert.equal(typeof sample.value, 'number');
  });

  it('sends the error as binary metadata svc-error-bin in the trailer', async () => {
    const raw = rawClient(s.address);
    const { error } = await rawCall(raw, 'GetAgent', { agent_id: 'no-such-agent' });
    raw.close();
    assert.equal(error?.code, status.NOT_FOUND);
    assert.match(error?.details ?? '', /^NOT_FOUND: /);
    const [bytes] = error?.metadata.get('svc-error-bin') ?? [];
    assert.ok(bytes instanceof Buffer);
  });

  describe('bad input: the right code, never INTERNAL', () => {
    const notFound = 'no-such-agent';
    const cases: Array<[string, (c: GrpcTestServer['client']) => Promise<unknown>, ErrorCode, number, Record<string, string>]> = [
      ['GetAgent of an unknown id', (c) => c.get(notFound), 'NOT_FOUND', status.NOT_FOUND, { agent_id: notFound }],
      ['UndeployAgent of an unknown id', (c) => c.undeploy(notFound), 'NOT_FOUND', status.NOT_FOUND, {}],
      ['GetAgent without an id', (c) => c.get(''), 'INVALID_ARGUMENT', status.INVALID_ARGUMENT, { field: 'agent_id' }],
      ['SendMessage to an unknown agent', (c) => c.send({ receiver: notFound, message_type: 'inform' }), 'NOT_FOUND', status.NOT_FOUND, {}],
      ['SendMessage with an invalid performative', (c) => c.send({ receiver: notFound, message_type: 'shout' }), 'INVALID_ARGUMENT', status.INVALID_ARGUMENT, { field: 'message_type', reason: 'unknown_performative', value: 'shout' }],
      ['SendMessage without a receiver', (c) => c.send({ receiver: '', message_type: 'inform' }), 'INVALID_ARGUMENT', status.INVALID_ARGUMENT, { field: 'receiver', reason: 'required' }],
      ['SendMessage naming another sender', (c) => c.send({ receiver: notFound, message_type: 'inform', sender: 'agent-x' }), 'INVALID_ARGUMENT', status.INVALID_ARGUMENT, { field: 'sender' }],
      ['SendMessage with a control character in an id', (c) => c.send({ receiver: 'a\u0001b', message_type: 'inform' }), 'INVALID_ARGUMENT', status.INVALID_ARGUMENT, { field: 'receiver' }],
      ['DeployAgent without a name', (c) => c.deploy({ name: '', wasm_module: echo }), 'INVALID_ARGUMENT', status.INVALID_ARGUMENT, {}],
      ['DeployAgent of bytes that are no module', (c) => c.deploy({ name: 'garbage', wasm_module: new TextEncoder().encode('#!/bin/sh\n') }), 'INVALID_MODULE', status.INVALID_ARGUMENT, { reason: 'malformed' }],
      ['DeployAgent of an empty module', (c) => c.deploy({ name: 'empty', wasm_module: new Uint8Array() }), 'INVALID_ARGUMENT', status.INVALID_ARGUMENT, {}],
      ['ListAgents with a forged page token', (c) => c.list({ page_token: 'not-a-token' }), 'INVALID_ARGUMENT', status.INVALID_ARGUMENT, {}],
    ];
    for (const [name, call, code, grpcCode, metadata] of cases) {
      it(name, async () => {
        const error = await failure(call(s.client));
        assert.notEqual(error.code, 'INTERNAL');
        assertError(error, code, grpcCode, metadata);
      });
    }

    it('SendMessage with no message at all', async () => {
      const raw = rawClient(s.address);
      const { error } = await rawCall(raw, 'SendMessage', {});
      raw.close();
      assert.equal(error?.code, status.INVALID_ARGUMENT);
    });

    it('DeployAgent under a name already taken', async () => {
      const { agent_id } = await s.client.deploy({ name: 'taken', wasm_module: echo });
      assertError(await failure(s.client.deploy({ name: 'taken', wasm_module: echo })), 'ALREADY_EXISTS', status.ALREADY_EXISTS);
      await s.client.undeploy(agent_id);
    });

    it('the server is still up and healthy after all of them', async () => {
      assert.equal((await s.client.health()).status, 'healthy');
    });
  });

  it('echoes an x-trace-id that is no W3C trace id as sent; one too long to echo gets a new id', async () => {
    const raw = rawClient(s.address);
    const metadata = new Metadata();
    metadata.set('x-trace-id', 'not-a-trace-id');
    const { value } = await rawCall(raw, 'Health', {}, metadata);
    const tooLong = new Metadata();
    tooLong.set('x-trace-id', 'x'.repeat(129));
    const { value: fresh } = await rawCall(raw, 'Health', {}, tooLong);
    raw.close();
    assert.equal((value as { trace_id: string }).trace_id, 'not-a-trace-id');
    assert.match((fresh as { trace_id: string }).trace_id, /^[0-9a-f]{32}$/);
  });
});
