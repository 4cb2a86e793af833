import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Metadata, status } from '@grpc/grpc-js';
import { ERROR_TRAILER, errorFromStatus, MAX_ERROR_TEXT, toGrpcStatus, transportError } from '../../../src/api/grpc/grpc-errors.js';
import { ERROR_CODES, ERROR_TABLE, SvcError } from '../../../src/errors/svc-error.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';

describe('toGrpcStatus', () => {
  for (const code of ERROR_CODES) {
    it(`${code}: status ${ERROR_TABLE[code].grpc} and the Error in ${ERROR_TRAILER}`, () => {
      const out = toGrpcStatus(new SvcError(code, `a ${code}`, { field: 'x' }), TRACE);
      assert.equal(out.code, ERROR_TABLE[code].grpc);
      assert.deepEqual(errorFromStatus(out), { code, message: `a ${code}`, trace_id: TRACE, metadata: { field: 'x' } });
    });
  }

  it('turns anything else into INTERNAL without its message or stack', () => {
    const out = toGrpcStatus(new TypeError('secret path /etc/shadow'), TRACE);
    assert.equal(out.code, status.INTERNAL);
    assert.doesNotMatch(out.details, /shadow/);
    const body = errorFromStatus(out);
    assert.equal(body.code, 'INTERNAL');
    assert.doesNotMatch(body.message, /shadow|TypeError|at /);
  });

  it('carries the trailer as binary metadata', () => {
    const [value] = toGrpcStatus(new SvcError('NOT_FOUND', 'no agent'), TRACE).metadata.get(ERROR_TRAILER);
    assert.ok(value instanceof Buffer);
  });

  it('cuts an echoed message and metadata values to MAX_ERROR_TEXT, so the trailer fits any client', () => {
    const id = 'a'.repeat(100_000);
    const out = toGrpcStatus(new SvcError('NOT_FOUND', `agent ${id} not found`, { agent_id: id, field: 'agent_id' }), TRACE);
    const body = errorFromStatus(out);
    assert.equal(body.message.length, MAX_ERROR_TEXT);
    assert.ok(body.message.endsWith('…'));
    assert.equal(body.metadata.agent_id?.length, MAX_ERROR_TEXT);
    assert.equal(body.metadata.field, 'agent_id');
    assert.equal(out.details, `NOT_FOUND: ${body.message}`);
  });

  it('never cuts a surrogate pair in half', () => {
    const text = `${'a'.repeat(MAX_ERROR_TEXT - 2)}${'😀'.repeat(10)}`;
    const { message } = errorFromStatus(toGrpcStatus(new SvcError('INVALID_ARGUMENT', text), TRACE));
    assert.doesNotMatch(message, /[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
    assert.ok(message.length <= MAX_ERROR_TEXT);
  });
});

describe('transportError: a status grpc-js sent itself', () => {
  const cases: Array<[string, number, boolean, string | undefined]> = [
    ['a request that does not decode', status.INTERNAL, false, 'INVALID_ARGUMENT'],
    ['an unsupported encoding, no or two request messages', status.UNIMPLEMENTED, false, 'INVALID_ARGUMENT'],
    ['a response it could not send', status.INTERNAL, true, 'INTERNAL'],
    ['a handler that threw', status.UNKNOWN, false, 'INTERNAL'],
    ['a message over the receive limit', status.RESOURCE_EXHAUSTED, false, 'PAYLOAD_TOO_LARGE'],
    ['a response over the send limit', status.RESOURCE_EXHAUSTED, true, 'INTERNAL'],
    ["the client's deadline passing", status.DEADLINE_EXCEEDED, false, 'DEADLINE_EXCEEDED'],
    ['success', status.OK, true, undefined],
  ];
  for (const [name, grpcCode, answered, code] of cases) {
    it(`${name}: ${code ?? 'sent as it is'}`, () => {
      const error = transportError({ code: grpcCode, details: 'grpc-js said so' }, answered);
      assert.equal(error?.code, code);
      if (code === 'INVALID_ARGUMENT') assert.equal(error?.metadata.reason, 'malformed_request');
    });
  }

  it("a message over the receive limit names grpc-js's figures", () => {
    const error = transportError({ code: status.RESOURCE_EXHAUSTED, details: 'Received message larger than max (1200 vs 1024)' }, false);
    assert.deepEqual(error?.metadata, { reason: 'too_large', limit: '1024', size: '1200' });
    const inflated = transportError({ code: status.RESOURCE_EXHAUSTED, details: 'Received message that decompresses to a size larger than 1024' }, false);
    assert.deepEqual(inflated?.metadata, { reason: 'too_large', limit: '1024' });
  });
});

describe('errorFromStatus without a trailer', () => {
  const cases: Array<[number, string]> = [
    [status.UNAVAILABLE, 'UNAVAILABLE'],
    [status.DEADLINE_EXCEEDED, 'DEADLINE_EXCEEDED'],
    [status.RESOURCE_EXHAUSTED, 'RESOURCE_EXHAUSTED'],
    [status.NOT_FOUND, 'NOT_FOUND'],
    [status.UNKNOWN, 'INTERNAL'],
    [status.CANCELLED, 'INTERNAL'],
  ];
  for (const [grpcCode, code] of cases) {
    it(`status ${status[grpcCode]} reads as ${code}`, () => {
      const body = errorFromStatus({ code: grpcCode, details: 'transport said so', metadata: new Metadata() });
      assert.deepEqual(body, { code, message: 'transport said so', trace_id: '', metadata: {} });
    });
  }

  it('ignores a trailer that does not decode', () => {
    const metadata = new Metadata();
    metadata.set(ERROR_TRAILER, Buffer.from([0xff, 0xff, 0xff]));
    assert.equal(errorFromStatus({ code: status.NOT_FOUND, details: 'x', metadata }).code, 'NOT_FOUND');
  });

  it('ignores a trailer whose code is not one of ours', () => {
    const out = toGrpcStatus(new SvcError('NOT_FOUND', 'x'), TRACE);
    const bogus = new Metadata();
    bogus.set(ERROR_TRAILER, Buffer.from(out.metadata.get(ERROR_TRAILER)[0] as Buffer).fill(0x41, 2, 11));
    assert.equal(errorFromStatus({ code: status.NOT_FOUND, details: 'x', metadata: bogus }).trace_id, '');
  });
});
