import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isTraceId, newTraceId, traceIdFrom } from '../../../src/api/http/trace-id.js';

const ID = '4bf92f3577b34da6a3ce929d0e0e4736';

test('a valid X-Trace-Id is kept, lower-cased', () => {
  assert.equal(traceIdFrom({ 'x-trace-id': ID.toUpperCase() }), ID);
  assert.equal(traceIdFrom({ 'x-trace-id': ` ${ID} ` }), ID);
});

test('without a valid X-Trace-Id, the traceparent trace id; else a new id', () => {
  assert.equal(traceIdFrom({ traceparent: `00-${ID}-00f067aa0ba902b7-01` }), ID);
  assert.equal(traceIdFrom({ 'x-trace-id': 'abc', traceparent: `00-${ID}-00f067aa0ba902b7-01` }), ID);
  for (const headers of [{}, { 'x-trace-id': '0'.repeat(32) }, { 'x-trace-id': 'z'.repeat(32) }, { traceparent: `00-${'0'.repeat(32)}-00f067aa0ba902b7-01` }]) {
    const id = traceIdFrom(headers);
    assert.ok(isTraceId(id), id);
    assert.notEqual(id, ID);
  }
});

test('new ids are 32 hex digits and do not repeat across pool refills', () => {
  const ids = new Set(Array.from({ length: 1000 }, () => newTraceId()));
  assert.equal(ids.size, 1000);
  for (const id of ids) assert.match(id, /^[0-9a-f]{32}$/);
});
