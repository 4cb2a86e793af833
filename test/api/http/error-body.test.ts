import { test } from 'node:test';
import assert from 'node:assert/strict';
import { httpError } from '../../../src/api/http/error-body.js';
import { ERROR_CODES, ERROR_TABLE, SvcError } from '../../../src/errors/svc-error.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';

test('every code answers with the status of the error table and the Error body', () => {
  for (const code of ERROR_CODES) {
    const answer = httpError(new SvcError(code, 'why', { field: 'f' }), TRACE);
    assert.equal(answer.status, ERROR_TABLE[code].http);
    assert.deepEqual(answer.body, { code, message: 'why', trace_id: TRACE, metadata: { field: 'f' } });
  }
});

test('anything else is INTERNAL without its message or stack', () => {
  const answer = httpError(new TypeError('secret path /etc/x at line 3'), TRACE);
  assert.deepEqual(answer, { status: 500, body: { code: 'INTERNAL', message: 'internal error', trace_id: TRACE, metadata: {} }, headers: {} });
  assert.equal(httpError('thrown string', TRACE).status, 500);
  assert.equal(httpError(undefined, TRACE).status, 500);
});

test('http-errors style 4xx failures map onto the table; their text shows only when exposable', () => {
  assert.equal(httpError(Object.assign(new Error('too big'), { status: 413, expose: true }), TRACE).body.code, 'PAYLOAD_TOO_LARGE');
  assert.deepEqual(httpError(Object.assign(new Error('bad'), { status: 400, expose: true }), TRACE).body, { code: 'INVALID_ARGUMENT', message: 'bad', trace_id: TRACE, metadata: { http_status: '400' } });
  assert.equal(httpError(Object.assign(new Error('hidden'), { status: 415, expose: false }), TRACE).body.message, 'bad request');
  assert.equal(httpError(Object.assign(new Error('x'), { status: 503 }), TRACE).status, 500);
});

test('RATE_LIMITED carries Retry-After', () => {
  assert.deepEqual(httpError(new SvcError('RATE_LIMITED', 'slow down', { retry_after_seconds: '2' }), TRACE).headers, { 'Retry-After': '2' });
});
