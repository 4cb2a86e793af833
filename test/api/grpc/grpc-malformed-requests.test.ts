/**
 * What a hostile client can put on the wire, sent as raw HTTP/2 frames over
 * loopback: each request grpc-js refuses itself (bytes that are no protobuf,
 * a compressed message that does not inflate or names an unknown encoding, a
 * malformed grpc-timeout, no or two request messages) ends with
 * INVALID_ARGUMENT and the `svc-error-bin` trailer, not grpc-js's bare
 * INTERNAL or UNIMPLEMENTED; and an error echoing a huge agent id still
 * reaches the client instead of hanging the call.
 */
import assert from 'node:assert/strict';
import type http2 from 'node:http2';
import { after, before, describe, it } from 'node:test';
import { status } from '@grpc/grpc-js';
import { MAX_ERROR_TEXT } from '../../../src/api/grpc/grpc-errors.js';
import { loadManagementProto } from '../../../src/api/proto.js';
import { assertError, failure, startGrpcTestServer, SUITE_TIMEOUT, type GrpcTestServer } from './grpc-harness.js';
import { frame, RAW_CALL_TIMEOUT_MS, rawCall, SERVICE } from './grpc-raw-call.js';

const garbage = Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff]);
const getRequest = Buffer.from([0x0a, 0x03, 0x61, 0x62, 0x63]); // GetAgentRequest{agent_id: "abc"}

const cases: Array<[string, string, Buffer[], http2.OutgoingHttpHeaders?]> = [
  ['DeployAgent: bytes that are no protobuf', 'DeployAgent', [frame(garbage)]],
  ['GetAgent: a truncated varint', 'GetAgent', [frame(Buffer.from([0x08, 0x80]))]],
  ['SendMessage: a field of the wrong wire type', 'SendMessage', [frame(Buffer.from([0x0d, 1, 2, 3, 4]))]],
  ['ListAgents: a start-group tag', 'ListAgents', [frame(Buffer.from([0x0b]))]],
  ['SubscribeMessages: bytes that are no protobuf', 'SubscribeMessages', [frame(garbage)]],
  ['Health: a length past the end', 'Health', [frame(Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]))]],
  ['GetAgent: gzip flagged, not gzip', 'GetAgent', [frame(getRequest, 1)], { 'grpc-encoding': 'gzip' }],
  ['GetAgent: an encoding the server does not know', 'GetAgent', [frame(getRequest, 1)], { 'grpc-encoding': 'snappy' }],
  ['Health: a malformed grpc-timeout', 'Health', [frame(Buffer.alloc(0))], { 'grpc-timeout': 'abc' }],
  ['GetAgent: two request messages', 'GetAgent', [frame(getRequest), frame(getRequest)]],
  ['Health: no request message', 'Health', []],
  ['SubscribeMessages: no request message', 'SubscribeMessages', []],
];

describe('requests grpc-js cannot read', SUITE_TIMEOUT, () => {
  let s: GrpcTestServer;
  before(async () => {
    s = await startGrpcTestServer();
  });
  after(() => s.stop());

  for (const [name, method, frames, headers] of cases) {
    it(`${name}: INVALID_ARGUMENT with the trailer`, async () => {
      const answer = await rawCall(s.address, SERVICE + method, frames, headers);
      assert.equal(answer.grpcStatus, status.INVALID_ARGUMENT, status[answer.grpcStatus]);
      assert.ok(answer.trailer, 'the svc-error-bin trailer was sent');
      const body = loadManagementProto().decodeError(answer.trailer);
      assert.equal(body.code, 'INVALID_ARGUMENT');
      assert.equal(body.metadata.reason, 'malformed_request');
      assert.match(body.trace_id, /^[0-9a-f]{32}$/);
    });
  }

  it('reflection: bytes that are no protobuf', async () => {
    const answer = await rawCall(s.address, '/grpc.reflection.v1.ServerReflection/ServerReflectionInfo', [frame(garbage)]);
    assert.equal(answer.grpcStatus, status.INVALID_ARGUMENT);
    assert.ok(answer.trailer);
  });

  it('an agent id of 100 000 characters: NOT_FOUND arrives, its echo of the id cut short', async () => {
    const error = await failure(s.client.get('a'.repeat(100_000), { timeoutMs: RAW_CALL_TIMEOUT_MS }));
    assertError(error, 'NOT_FOUND', status.NOT_FOUND);
    assert.ok(error.body.message.length <= MAX_ERROR_TEXT);
    assert.ok((error.body.metadata.agent_id ?? '').length <= MAX_ERROR_TEXT);
  });

  it('the server is still healthy after all of them', async () => {
    assert.equal((await s.client.health()).status, 'healthy');
  });
});

describe('a method the server does not have', SUITE_TIMEOUT, () => {
  let s: GrpcTestServer;
  before(async () => {
    s = await startGrpcTestServer();
  });
  after(() => s.stop());

  for (const path of [`${SERVICE}DeleteEverything`, '/other.v1.OtherService/Call', '/not-a-method']) {
    it(`${path}: UNIMPLEMENTED, with the trailer naming the method`, async () => {
      const answer = await rawCall(s.address, path, [frame(Buffer.alloc(0))]);
      assert.equal(answer.grpcStatus, status.UNIMPLEMENTED, status[answer.grpcStatus]);
      assert.ok(answer.trailer, 'the svc-error-bin trailer was sent');
      const body = loadManagementProto().decodeError(answer.trailer);
      assert.equal(body.code, 'NOT_FOUND');
      assert.deepEqual(body.metadata, { reason: 'unknown_method', method: path });
      assert.match(body.trace_id, /^[0-9a-f]{32}$/);
    });
  }

  it("echoes the client's x-trace-id in the trailer", async () => {
    const answer = await rawCall(s.address, `${SERVICE}Nope`, [frame(Buffer.alloc(0))], { 'x-trace-id': 'req-42' });
    assert.ok(answer.trailer);
    assert.equal(loadManagementProto().decodeError(answer.trailer).trace_id, 'req-42');
  });

  it('is counted under method "OTHER", and the server is still healthy', async () => {
    const before = s.t.server.metrics.registry.getSingleMetric('svc_grpc_requests_total');
    assert.ok(before);
    const count = async () => ((await before.get()).values.find((v) => v.labels.method === 'OTHER' && v.labels.status === 'UNIMPLEMENTED')?.value ?? 0);
    const was = await count();
    await rawCall(s.address, `${SERVICE}Nope`, [frame(Buffer.alloc(0))]);
    assert.equal(await count(), was + 1);
    assert.equal((await s.client.health()).status, 'healthy');
  });
});
