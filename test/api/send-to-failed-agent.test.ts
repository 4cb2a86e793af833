/**
 * A send to a failed agent follows one rule on both doors (issue 41): the
 * message is not accepted, and the client is told at once with UNAVAILABLE,
 * reason `agent_failed` (REST 503, gRPC UNAVAILABLE, the same Error body).
 * An agent sender, which has no error to read, gets a FIPA `failure` instead
 * (test/agents/messaging.test.ts); docs/api.md states both.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createGrpcClient, RemoteError, type GrpcClient } from '../../src/api/grpc/grpc-client.js';
import { grpcServerOptionsFrom } from '../../src/api/grpc/grpc-server-options.js';
import { createGrpcServer, type GrpcServer } from '../../src/api/grpc/grpc-server.js';
import { CRASHABLE_COUNTER, compile } from '../agents/agent-wat.js';
import { call, eventually, startGateway, type Gateway } from './http/http-fixtures.js';

let gw: Gateway;
let grpcServer: GrpcServer;
let grpc: GrpcClient;
before(async () => {
  gw = await startGateway(['--server.grpc_addr=127.0.0.1:0', '--runtime.restart_max_restarts=0']);
  grpcServer = createGrpcServer(gw.server.service, { ...grpcServerOptionsFrom(gw.config), tracing: gw.server.tracing, metrics: gw.server.metrics });
  grpc = createGrpcClient(await grpcServer.start());
});
after(async () => {
  grpc.close();
  await grpcServer.stop();
  await gw.stop();
});

test('a client send to a failed agent: 503 UNAVAILABLE agent_failed on REST, UNAVAILABLE agent_failed on gRPC, nothing accepted', async () => {
  const module = Buffer.from(await compile(CRASHABLE_COUNTER)).toString('base64');
  const deployed = await call(gw.base, 'POST', '/api/v1/agents', { name: 'crashes-once', wasm_module: module });
  assert.equal(deployed.status, 201, deployed.text);
  const id = String(deployed.body.agent_id);
  // A '!' makes it trap; with no restarts allowed, the first crash fails it.
  assert.equal((await call(gw.base, 'POST', `/api/v1/agents/${id}/messages`, { message_type: 'request', content: '!' })).status, 202);
  await eventually(async () => ((await call(gw.base, 'GET', `/api/v1/agents/${id}`)).body.state === 'failed' ? true : undefined), 30_000);

  const rest = await call(gw.base, 'POST', `/api/v1/agents/${id}/messages`, { message_type: 'request', content: 'hello' });
  assert.equal(rest.status, 503, rest.text);
  assert.equal(rest.body.code, 'UNAVAILABLE');
  assert.deepEqual({ ...(rest.body.metadata as Record<string, string>) }, { agent_id: id, reason: 'agent_failed' });

  const refused = await grpc.send({ receiver: id, message_type: 'request', content: 'hello' }).then(
    () => assert.fail('the gRPC send was accepted'),
    (error: unknown) => error,
  );
  assert.ok(refused instanceof RemoteError, String(refused));
  assert.equal(refused.body.code, 'UNAVAILABLE');
  assert.equal(refused.body.message, rest.body.message);
  assert.deepEqual({ ...refused.body.metadata }, { agent_id: id, reason: 'agent_failed' });
  assert.equal((await call(gw.base, 'GET', `/api/v1/agents/${id}`)).body.messages_received, 1, 'neither send reached it');
});
