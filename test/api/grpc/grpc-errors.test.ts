import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Metadata, status } from '@grpc/grpc-js';
import { ERROR_TRAILER, errorFromStatus, toGrpcStatus } from '../../../src/api/grpc/grpc-errors.js';
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
