import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Metadata } from '@grpc/grpc-js';
import { ANONYMOUS_PRINCIPAL, callContextFrom, deadlineMillis, traceIdFrom } from '../../../src/api/grpc/grpc-call-context.js';
import { isTraceId } from '../../../src/telemetry/trace-ids.js';

function metadata(entries: Record<string, string>): Metadata {
  const md = new Metadata();
  for (const [k, v] of Object.entries(entries)) md.set(k, v);
  return md;
}

const GIVEN = '4bf92f3577b34da6a3ce929d0e0e4736';

describe('trace ids', () => {
  const cases: Array<[string, Record<string, string>, string | undefined]> = [
    ['x-trace-id as given', { 'x-trace-id': GIVEN }, GIVEN],
    ['x-trace-id lower-cased', { 'x-trace-id': GIVEN.toUpperCase() }, GIVEN],
    ['x-trace-id before traceparent', { 'x-trace-id': GIVEN, traceparent: `00-${'1'.repeat(32)}-00f067aa0ba902b7-01` }, GIVEN],
    ['traceparent when x-trace-id is absent', { traceparent: `00-${GIVEN}-00f067aa0ba902b7-01` }, GIVEN],
    ['traceparent when x-trace-id is not a trace id', { 'x-trace-id': 'hello', traceparent: `00-${GIVEN}-00f067aa0ba902b7-01` }, GIVEN],
    ['a new one for a malformed x-trace-id', { 'x-trace-id': 'not a trace id' }, undefined],
    ['a new one for a trace id with a character too many', { 'x-trace-id': `${GIVEN}0` }, undefined],
    ['a new one for the all-zero id', { 'x-trace-id': '0'.repeat(32) }, undefined],
    ['a new one for an all-zero traceparent', { traceparent: `00-${'0'.repeat(32)}-00f067aa0ba902b7-01` }, undefined],
    ['a new one when nothing is given', {}, undefined],
  ];
  for (const [name, entries, expected] of cases) {
    it(name, () => {
      const id = traceIdFrom(metadata(entries));
      if (expected === undefined) assert.ok(isTraceId(id) && id !== GIVEN, id);
      else assert.equal(id, expected);
    });
  }
});

describe('callContextFrom', () => {
  const now = 1_000_000;
  const cases: Array<[string, Date | number, number | undefined, number]> = [
    ['no client deadline, no server timeout (a stream)', Infinity, undefined, Infinity],
    ['the server timeout alone', Infinity, 60_000, now + 60_000],
    ['the client deadline when earlier', new Date(now + 500), 60_000, now + 500],
    ['the server timeout when earlier', now + 120_000, 60_000, now + 60_000],
  ];
  for (const [name, deadline, timeoutMs, expected] of cases) {
    it(name, () => {
      const ctx = callContextFrom({ metadata: new Metadata(), deadline, timeoutMs, now });
      assert.equal(ctx.deadline, expected);
      assert.equal(ctx.principal, ANONYMOUS_PRINCIPAL);
      assert.ok(isTraceId(ctx.trace_id));
    });
  }

  it('reads Date and number deadlines alike', () => {
    assert.equal(deadlineMillis(new Date(1234)), 1234);
    assert.equal(deadlineMillis(1234), 1234);
    assert.equal(deadlineMillis(Infinity), Infinity);
  });
});
