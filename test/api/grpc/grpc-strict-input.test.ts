/**
 * Strict input on the gRPC door (issue 41, item 5): a varint cut off inside
 * an embedded message, a length past its end, a known field in the wrong
 * wire type and invalid UTF-8 in a `string` (top level, nested, repeated, in
 * a map) each end with INVALID_ARGUMENT naming the field; `bytes` may hold
 * anything and unknown fields are skipped; the server stays up.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { status } from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import { checkRequest } from '../../../src/api/grpc/grpc-strict-decode.js';
import { loadManagementProto } from '../../../src/api/proto.js';
import { startGrpcTestServer, SUITE_TIMEOUT, type GrpcTestServer } from './grpc-harness.js';
import { frame, rawCall, SERVICE } from './grpc-raw-call.js';

type Bytes = Uint8Array | readonly number[] | string;

const toBytes = (value: Bytes): Uint8Array => (typeof value === 'string' ? Buffer.from(value) : Uint8Array.from(value));

/** A length-delimited field: tag, length, bytes. */
function ld(field: number, value: Bytes): Uint8Array {
  return protobuf.Writer.create().uint32((field << 3) | 2).bytes(toBytes(value)).finish();
}

const concat = (...parts: Uint8Array[]): Uint8Array => Buffer.concat(parts);
/** "a", 0xFF, "b": not UTF-8. */
const BAD = [0x61, 0xff, 0x62];
/** Ten varint bytes, each saying another follows, and none does: protobufjs reads a 32-bit field's first five and skips five. */
const UNENDED = Array.from({ length: 10 }, () => 0x80);
/** ListAgentsRequest{page_size: UNENDED}. */
const CUT_VARINT = Uint8Array.from([0x08, ...UNENDED]);
/** DeployAgentRequest{resources{cpu_shares: UNENDED}}. */
const CUT_NESTED_VARINT = ld(4, [0x10, ...UNENDED]);

const refused: Array<[string, string, Uint8Array, string, string]> = [
  ['invalid UTF-8 in agent_id', 'GetAgent', ld(1, BAD), 'agent_id', 'invalid_utf8'],
  ['invalid UTF-8 in message.content', 'SendMessage', ld(1, concat(ld(3, 'x'), ld(4, 'inform'), ld(5, BAD))), 'message.content', 'invalid_utf8'],
  ['invalid UTF-8 in a metadata value', 'SendMessage', ld(1, ld(12, concat(ld(1, 'k'), ld(2, BAD)))), 'message.metadata', 'invalid_utf8'],
  ['invalid UTF-8 in a metadata key', 'SendMessage', ld(1, ld(12, concat(ld(1, BAD), ld(2, 'v')))), 'message.metadata (a key)', 'invalid_utf8'],
  ['invalid UTF-8 in the second capability', 'DeployAgent', concat(ld(1, 'n'), ld(3, 'ok'), ld(3, BAD)), 'capabilities[1]', 'invalid_utf8'],
  ['invalid UTF-8 in a stream filter', 'SubscribeMessages', ld(1, ld(1, BAD)), 'filter.agent_id', 'invalid_utf8'],
  ['a varint that never ends', 'ListAgents', CUT_VARINT, 'page_size', 'malformed_request'],
  ['a varint that never ends, in an embedded message', 'DeployAgent', CUT_NESTED_VARINT, 'resources.cpu_shares', 'malformed_request'],
  ['a length past the end of an embedded message', 'SendMessage', ld(1, [0x2a, 0x10, 0x61]), 'message.content', 'malformed_request'],
  ['a string field in the varint wire type', 'GetAgent', Uint8Array.from([0x08, 0x01]), 'agent_id', 'malformed_request'],
  ['a number field given as a string', 'ListAgents', ld(1, 'ten'), 'page_size', 'malformed_request'],
];

describe('strict gRPC requests, checked alone', () => {
  const service = loadManagementProto().service;
  const typeOf = (method: string): protobuf.Type => {
    const type = service.methods[method]?.resolvedRequestType;
    assert.ok(type);
    return type;
  };

  it('protobufjs alone accepts a varint that never ends, and a string that is not UTF-8', () => {
    // The lenient decoding this check exists for.
    assert.equal((typeOf('ListAgents').decode(CUT_VARINT) as unknown as { page_size: number }).page_size, 0);
    assert.equal((typeOf('GetAgent').decode(ld(1, BAD)) as unknown as { agent_id: string }).agent_id, 'a\uFFFDb');
    assert.equal(checkRequest(typeOf('ListAgents'), CUT_VARINT)?.metadata.field, 'page_size');
    assert.equal(checkRequest(typeOf('GetAgent'), ld(1, BAD))?.metadata.field, 'agent_id');
  });

  it('passes well-formed requests: unknown fields, any bytes in a bytes field, an empty request', () => {
    assert.equal(checkRequest(typeOf('GetAgent'), concat(ld(1, 'agent'), Uint8Array.from([0x78, 0x01]))), undefined);
    assert.equal(checkRequest(typeOf('DeployAgent'), concat(ld(1, 'n'), ld(2, [0xff, 0xfe, 0x00]))), undefined);
    assert.equal(checkRequest(typeOf('Health'), new Uint8Array(0)), undefined);
  });
});

describe('strict gRPC requests, over the wire', SUITE_TIMEOUT, () => {
  let s: GrpcTestServer;
  before(async () => {
    s = await startGrpcTestServer();
  });
  after(() => s.stop());

  for (const [name, method, bytes, field, reason] of refused) {
    it(`${method}: ${name}: INVALID_ARGUMENT naming ${field}`, async () => {
      const answer = await rawCall(s.address, SERVICE + method, [frame(bytes)]);
      assert.equal(answer.grpcStatus, status.INVALID_ARGUMENT, status[answer.grpcStatus]);
      assert.ok(answer.trailer, 'the svc-error-bin trailer was sent');
      const body = loadManagementProto().decodeError(answer.trailer);
      assert.equal(body.code, 'INVALID_ARGUMENT');
      assert.deepEqual([body.metadata.field, body.metadata.reason], [field, reason], body.message);
      assert.match(body.trace_id, /^[0-9a-f]{32}$/);
    });
  }

  it('a well-formed request with an unknown field goes through (NOT_FOUND for an agent that does not exist)', async () => {
    const answer = await rawCall(s.address, `${SERVICE}GetAgent`, [frame(concat(ld(1, 'nobody'), Uint8Array.from([0x78, 0x01])))]);
    assert.equal(answer.grpcStatus, status.NOT_FOUND);
  });

  it('bytes that are no UTF-8 in wasm_module reach admission (INVALID_MODULE), not the UTF-8 check', async () => {
    const answer = await rawCall(s.address, `${SERVICE}DeployAgent`, [frame(concat(ld(1, 'not-a-module'), ld(2, [0xff, 0xfe, 0x00, 0x61])))]);
    assert.ok(answer.trailer);
    assert.equal(loadManagementProto().decodeError(answer.trailer).code, 'INVALID_MODULE');
  });

  it('nothing was deployed by any of them, and the server is healthy', async () => {
    assert.equal((await s.client.list({})).agents.length, 0);
    assert.equal((await s.client.health()).status, 'healthy');
  });
});
