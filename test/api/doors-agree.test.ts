/**
 * Both doors agree: one scenario run through gRPC and through REST against
 * the same real server gives the same results, errors included. Values the
 * server assigns (ids, timestamps) and the names the scenario chose are set
 * aside; proto3's empty strings and JSON's omitted fields read the same.
 */
import { once } from 'node:events';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { WebSocket } from 'ws';
import { createGrpcClient, RemoteError, type GrpcClient } from '../../src/api/grpc/grpc-client.js';
import { grpcServerOptionsFrom } from '../../src/api/grpc/grpc-server-options.js';
import { createGrpcServer, type GrpcServer } from '../../src/api/grpc/grpc-server.js';
import { call, deployEcho, ECHO_WASM, eventually, startGateway, type Gateway } from './http/http-fixtures.js';

let gw: Gateway;
let grpcServer: GrpcServer;
let grpc: GrpcClient;
before(async () => {
  gw = await startGateway(['--server.grpc_addr=127.0.0.1:0']);
  grpcServer = createGrpcServer(gw.server.service, { ...grpcServerOptionsFrom(gw.config), tracing: gw.server.tracing, metrics: gw.server.metrics });
  grpc = createGrpcClient(await grpcServer.start());
});
after(async () => {
  grpc.close();
  await grpcServer.stop();
  await gw.stop();
});

/** Drops what differs by construction: server-assigned values, and empty strings (unset in proto3, omitted in JSON). */
/** Without proto3's absent values: '' and, for a message field, the null grpc-js gives where JSON leaves the field out. */
function comparable(value: Record<string, unknown>, drop: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).filter(([key, v]) => !drop.includes(key) && v !== '' && v !== null));
}

const AGENT_ASSIGNED = ['agent_id', 'name', 'created_at', 'updated_at', 'state', 'memory_bytes'];
const MESSAGE_ASSIGNED = ['message_id', 'conversation_id', 'created_at', 'receiver', 'sender'];
const TRACEPARENT = /^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/;

/** A message with the trace context the server writes into its metadata set aside, after checking it is there. */
function withoutTraceContext(message: Record<string, unknown>): Record<string, unknown> {
  const { traceparent, tracestate: _tracestate, ...metadata } = (message.metadata ?? {}) as Record<string, string>;
  assert.match(traceparent ?? '', TRACEPARENT, `metadata of ${JSON.stringify(message)}`);
  return { ...message, metadata };
}

async function grpcError(promise: Promise<unknown>): Promise<Record<string, unknown>> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof RemoteError, String(err));
    return { code: err.body.code, metadata: err.body.metadata };
  }
  throw new Error('the gRPC call succeeded');
}

async function restError(method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const answer = await call(gw.base, method, path, body);
  assert.ok(answer.status >= 400, answer.text);
  return { code: answer.body.code, metadata: answer.body.metadata };
}

test('deploy, get and list give the same agents', async () => {
  // 16 pages: the echo example's declared maximum must fit the agent's memory_limit.
  const viaGrpc = (await grpc.deploy({ name: 'doors-grpc', wasm_module: ECHO_WASM, capabilities: ['echo'], resources: { memory_limit: 65536 * 16 } })).agent_id;
  const viaRest = (await call(gw.base, 'POST', '/api/v1/agents', { name: 'doors-rest', wasm_module: ECHO_WASM.toString('base64'), capabilities: ['echo'], resources: { memory_limit: 65536 * 16 } })).body.agent_id as string;
  for (const id of [viaGrpc, viaRest]) {
    const fromGrpc = await grpc.get(id);
    const fromRest = (await call(gw.base, 'GET', `/api/v1/agents/${id}`)).body;
    assert.deepEqual(comparable(fromRest, []), comparable(fromGrpc as unknown as Record<string, unknown>, []), 'one agent, both doors');
  }
  assert.deepEqual(comparable((await grpc.get(viaGrpc)) as unknown as Record<string, unknown>, AGENT_ASSIGNED), comparable((await grpc.get(viaRest)) as unknown as Record<string, unknown>, AGENT_ASSIGNED));
  const listed = await grpc.list({ page_size: 1000 });
  const restListed = (await call(gw.base, 'GET', '/api/v1/agents?page_size=1000')).body;
  assert.deepEqual(restListed.agents.map((a: { agent_id: string }) => a.agent_id), listed.agents.map((a) => a.agent_id));
});

test('messages sent through either door stream the same through either door', async () => {
  const agent = await deployEcho(gw.base, 'doors-echo');
  const grpcFrames: Array<Record<string, unknown>> = [];
  const stream = grpc.subscribe({ agent_id: agent });
  stream.on('data', (m: Record<string, unknown>) => grpcFrames.push(m));
  stream.on('error', () => undefined);
  const ws = new WebSocket(`ws://${gw.address}/api/v1/agents/${agent}/messages`);
  const wsFrames: Array<Record<string, unknown>> = [];
  ws.on('message', (data) => wsFrames.push(JSON.parse(String(data)) as Record<string, unknown>));
  // Both subscriptions are in place: the gRPC stream sends its headers once subscribed, the WebSocket opens after.
  await Promise.all([once(stream, 'metadata'), once(ws, 'open')]);

  const a = await grpc.send({ receiver: agent, message_type: 'request', content: 'through grpc', metadata: { k: 'v' } });
  const b = (await call(gw.base, 'POST', `/api/v1/agents/${agent}/messages`, { message_type: 'request', content: 'through rest', metadata: { k: 'v' } })).body;
  await eventually(() => (grpcFrames.length >= 4 && wsFrames.length >= 4 ? true : undefined));
  // Streams deliver in order: once a later marker is on both, nothing sent before it can still arrive.
  const marker = await grpc.send({ receiver: agent, message_type: 'inform', content: 'marker' });
  const beforeMarker = (frames: Array<Record<string, unknown>>): number => frames.findIndex((m) => m.message_id === marker.message_id);
  await eventually(() => (beforeMarker(grpcFrames) >= 0 && beforeMarker(wsFrames) >= 0 ? true : undefined));
  stream.cancel();
  ws.close();
  grpcFrames.splice(beforeMarker(grpcFrames));
  wsFrames.splice(beforeMarker(wsFrames));

  assert.deepEqual(wsFrames.map((m) => m.message_id), grpcFrames.map((m) => m.message_id), 'the same messages in the same order');
  assert.deepEqual(wsFrames.map((m) => comparable(m, [])), grpcFrames.map((m) => comparable(m, [])));
  const sent = wsFrames.filter((m) => m.message_id === a.message_id || m.message_id === b.message_id);
  // Each send is its own call, so each message carries its own trace context; the rest is the same.
  assert.deepEqual(comparable(withoutTraceContext(sent[0]!), MESSAGE_ASSIGNED), { ...comparable(withoutTraceContext(sent[1]!), MESSAGE_ASSIGNED), content: 'through grpc' });
});

test('the same refusals, with the same codes and metadata', async () => {
  assert.deepEqual(await restError('GET', '/api/v1/agents/01J00000000000000000000000'), await grpcError(grpc.get('01J00000000000000000000000')));
  assert.deepEqual(await restError('DELETE', '/api/v1/agents/01J00000000000000000000000'), await grpcError(grpc.undeploy('01J00000000000000000000000')));
  const agent = await deployEcho(gw.base, 'doors-refusals');
  assert.deepEqual(
    await restError('POST', '/api/v1/messages', { receiver: agent, message_type: 'shout' }),
    await grpcError(grpc.send({ receiver: agent, message_type: 'shout' })),
  );
  assert.deepEqual(
    await restError('POST', '/api/v1/agents', { name: 'doors-bad', wasm_module: 'AAECAw==' }),
    await grpcError(grpc.deploy({ name: 'doors-bad', wasm_module: new Uint8Array([0, 1, 2, 3]) })),
  );
  assert.deepEqual(await restError('POST', '/api/v1/agents', { name: 'doors-refusals', wasm_module: ECHO_WASM.toString('base64') }), await grpcError(grpc.deploy({ name: 'doors-refusals', wasm_module: ECHO_WASM })));
});

test('health agrees, each echoing its own trace id', async () => {
  const trace = '4bf92f3577b34da6a3ce929d0e0e4736';
  const viaGrpc = await grpc.health({ traceId: trace });
  const viaRest = (await call(gw.base, 'GET', '/api/v1/health', undefined, { 'x-trace-id': trace })).body;
  assert.deepEqual(viaRest, viaGrpc);
  assert.equal(viaRest.trace_id, trace);
});
