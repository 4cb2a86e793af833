/**
 * The doors' own ids (trace-ids.ts): W3C-valid, lowercase, never all zeros,
 * and a client's `X-Trace-Id` accepted only when it is a W3C trace id.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { INVALID_SPANID, INVALID_TRACEID } from '@opentelemetry/api';
import { isSpanId, isTraceId, newSpanId, newTraceId, normalizeTraceId } from '../../src/telemetry/trace-ids.js';

test('new ids are lowercase W3C ids and do not repeat', () => {
  const traces = new Set<string>();
  const spans = new Set<string>();
  for (let i = 0; i < 1_000; i++) {
    const traceId = newTraceId();
    const spanId = newSpanId();
    assert.ok(isTraceId(traceId), traceId);
    assert.ok(isSpanId(spanId), spanId);
    traces.add(traceId);
    spans.add(spanId);
  }
  assert.equal(traces.size, 1_000);
  assert.equal(spans.size, 1_000);
});

test('an id is 32 or 16 lowercase hex digits, not all zeros', () => {
  const cases: Array<[string, (value: string) => boolean, string, boolean]> = [
    ['a trace id', isTraceId, '4bf92f3577b34da6a3ce929d0e0e4736', true],
    ['upper case', isTraceId, '4BF92F3577B34DA6A3CE929D0E0E4736', false],
    ['all zeros', isTraceId, INVALID_TRACEID, false],
    ['one digit short', isTraceId, '4bf92f3577b34da6a3ce929d0e0e473', false],
    ['not hex', isTraceId, '4bf92f3577b34da6a3ce929d0e0e473g', false],
    ['a span id', isSpanId, '00f067aa0ba902b7', true],
    ['an all-zero span id', isSpanId, INVALID_SPANID, false],
    ['a trace id is no span id', isSpanId, '4bf92f3577b34da6a3ce929d0e0e4736', false],
  ];
  for (const [name, check, value, expected] of cases) assert.equal(check(value), expected, name);
});

test("a client's trace id is trimmed and lower-cased, or refused", () => {
  assert.equal(normalizeTraceId(' 4BF92F3577B34DA6A3CE929D0E0E4736 '), '4bf92f3577b34da6a3ce929d0e0e4736');
  assert.equal(normalizeTraceId(INVALID_TRACEID), undefined);
  assert.equal(normalizeTraceId('req-42'), undefined);
  assert.equal(normalizeTraceId(undefined), undefined);
});
