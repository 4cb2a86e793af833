import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as tick } from 'node:timers/promises';
import { Metadata } from '@grpc/grpc-js';
import { context, trace, type Context } from '@opentelemetry/api';
import { API_SPANS, SPANS } from '../../src/telemetry/span-names.js';
import {
  currentSpanId,
  currentTraceId,
  echoedTraceId,
  extractGrpcMetadata,
  extractHttpHeaders,
  extractMessageMetadata,
  injectGrpcMetadata,
  injectHttpHeaders,
  injectMessageMetadata,
  traceIdOrNew,
  type HeaderCarrier,
  type MessageMetadata,
} from '../../src/telemetry/trace-context.js';
import { isTraceId } from '../../src/telemetry/trace-ids.js';
import { memoryTracing, parentOf } from './telemetry-fixtures.js';

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/;

function remote(ctx: Context): { traceId: string; spanId: string; isRemote: boolean | undefined; state: string | undefined } {
  const span = trace.getSpanContext(ctx);
  assert.ok(span, 'a span context was extracted');
  return { traceId: span.traceId, spanId: span.spanId, isRemote: span.isRemote, state: span.traceState?.serialize() };
}

test('HTTP headers, gRPC metadata and message metadata round-trip the active span with its tracestate', async () => {
  const { tracing } = memoryTracing();
  const parent = extractHttpHeaders({ traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', tracestate: 'vendor=abc' });
  tracing.withSpan('hop', {}, () => {
    const expected = { traceId: tracing.currentTraceId(), spanId: tracing.currentSpanId(), isRemote: true, state: 'vendor=abc' };

    const headers: HeaderCarrier = {};
    injectHttpHeaders(headers);
    assert.match(String(headers.traceparent), TRACEPARENT);
    assert.deepEqual(remote(extractHttpHeaders(headers)), expected);

    const metadata = new Metadata();
    injectGrpcMetadata(metadata);
    assert.match(String(metadata.get('traceparent')[0]), TRACEPARENT);
    assert.deepEqual(remote(extractGrpcMetadata(metadata)), expected);

    const message: MessageMetadata = { traceparent: '00-11111111111111111111111111111111-2222222222222222-01', other: 'kept' };
    injectMessageMetadata(message);
    assert.equal(message.other, 'kept');
    assert.deepEqual(remote(extractMessageMetadata(message)), expected, 'the sender\'s context replaces an older traceparent');
  }, { parent });
  await tracing.shutdown();
});

test('a client, agent A and agent B form one trace across an HTTP hop, a gRPC hop and two message hops', async () => {
  const { tracing, spans } = memoryTracing();
  const mailbox: MessageMetadata[] = [];

  // Client: its own span, sent over HTTP.
  const request: HeaderCarrier = {};
  const clientTrace = tracing.withSpan('client.send', {}, () => {
    injectHttpHeaders(request);
    return tracing.currentTraceId();
  });

  // Server, REST door: the call's span, then the bus accepts the message.
  await tracing.withSpan(API_SPANS.SendMessage, {}, async () => {
    await tick();
    tracing.withSpan(SPANS.messagesSend, {}, () => {
      const metadata: MessageMetadata = {};
      injectMessageMetadata(metadata);
      mailbox.push(metadata);
    });
  }, { parent: extractHttpHeaders(request) });

  // Agent A handles it and sends to B; its execution is a child of the delivery.
  await tracing.withSpan(SPANS.agentExecute, {}, async () => {
    await tick();
    tracing.withSpan(SPANS.messagesSend, {}, () => {
      const metadata: MessageMetadata = {};
      injectMessageMetadata(metadata);
      mailbox.push(metadata);
    });
  }, { parent: extractMessageMetadata(mailbox[0]!) });

  // B runs on another node: the message crosses gRPC metadata first.
  const wire = new Metadata();
  injectGrpcMetadata(wire, extractMessageMetadata(mailbox[1]!));
  const lastTrace = tracing.withSpan(SPANS.agentExecute, {}, () => tracing.currentTraceId(), { parent: extractGrpcMetadata(wire) });

  assert.equal(lastTrace, clientTrace);
  const finished = await spans();
  assert.equal(new Set(finished.map((s) => s.spanContext().traceId)).size, 1, 'one trace');
  const byId = new Map(finished.map((s) => [s.spanContext().spanId, s]));
  const chain = (span: (typeof finished)[number]): string[] => {
    const parent = byId.get(parentOf(span));
    return parent === undefined ? [span.name] : [...chain(parent), span.name];
  };
  const deepest = finished[finished.length - 1]!;
  assert.deepEqual(chain(deepest), ['client.send', API_SPANS.SendMessage, SPANS.messagesSend, SPANS.agentExecute, SPANS.messagesSend, SPANS.agentExecute]);
  await tracing.shutdown();
});

test('x-trace-id: used when valid, over a traceparent of another trace; ignored when malformed', () => {
  const id = 'a'.repeat(31) + 'b';
  const parentOfOtherTrace = `00-${'c'.repeat(32)}-${'d'.repeat(16)}-01`;
  const cases: [string, HeaderCarrier, string | undefined][] = [
    ['alone', { 'x-trace-id': id }, id],
    ['upper case and spaces', { 'x-trace-id': ` ${id.toUpperCase()} ` }, id],
    ['wins over another trace', { 'x-trace-id': id, traceparent: parentOfOtherTrace }, id],
    ['all zeros is not an id', { 'x-trace-id': '0'.repeat(32), traceparent: parentOfOtherTrace }, 'c'.repeat(32)],
    ['too short', { 'x-trace-id': 'abc' }, undefined],
    ['malformed traceparent', { traceparent: '00-xyz-1-01' }, undefined],
    ['nothing', {}, undefined],
  ];
  for (const [name, headers, expected] of cases) {
    assert.equal(currentTraceId(extractHttpHeaders(headers)), expected, name);
    const metadata = new Metadata();
    for (const [key, value] of Object.entries(headers)) metadata.set(key, String(value));
    assert.equal(currentTraceId(extractGrpcMetadata(metadata)), expected, `${name} (gRPC)`);
  }
  // Same trace in both: the traceparent is kept, so the call's span has its parent.
  const same = extractHttpHeaders({ 'x-trace-id': 'c'.repeat(32), traceparent: parentOfOtherTrace });
  assert.equal(currentSpanId(same), 'd'.repeat(16));
  // Messages carry only traceparent/tracestate.
  assert.equal(currentTraceId(extractMessageMetadata({ 'x-trace-id': id })), undefined);
});

test('x-trace-id: echoed exactly as sent (trimmed) when it is visible ASCII of at most 128 characters, trace id or not', () => {
  const cases: [string, string | undefined, string | undefined][] = [
    ['a W3C id in upper case', ` ${'A'.repeat(32)} `, 'A'.repeat(32)],
    ['a request id', 'req-42', 'req-42'],
    ['a UUID', '123e4567-e89b-12d3-a456-426614174000', '123e4567-e89b-12d3-a456-426614174000'],
    ['all zeros', '0'.repeat(32), '0'.repeat(32)],
    ['128 characters', 'x'.repeat(128), 'x'.repeat(128)],
    ['129 characters', 'x'.repeat(129), undefined],
    ['a space inside', 'two words', undefined],
    ['not ASCII', 'trace-é', undefined],
    ['empty', '', undefined],
    ['none', undefined, undefined],
  ];
  for (const [name, given, expected] of cases) {
    const headers: HeaderCarrier = given === undefined ? {} : { 'x-trace-id': given };
    assert.equal(echoedTraceId(extractHttpHeaders(headers)), expected, name);
    if (expected === undefined) continue;
    const metadata = new Metadata();
    metadata.set('x-trace-id', given!);
    assert.equal(echoedTraceId(extractGrpcMetadata(metadata)), expected, `${name} (gRPC)`);
  }
  assert.equal(echoedTraceId(extractMessageMetadata({ 'x-trace-id': 'req-42' })), undefined, 'messages do not echo');
});

test('extraction starts from the root, not from whatever span is active', async () => {
  const { tracing } = memoryTracing();
  tracing.withSpan('unrelated', {}, () => {
    assert.equal(currentTraceId(extractHttpHeaders({})), undefined);
    assert.equal(trace.getSpan(extractMessageMetadata({})), undefined);
  });
  assert.equal(currentTraceId(context.active()), undefined);
  assert.ok(isTraceId(traceIdOrNew()), 'outside a trace a fresh id is made for error bodies');
  const inside = tracing.withSpan('call', {}, () => [tracing.currentTraceId(), traceIdOrNew()]);
  assert.equal(inside[0], inside[1]);
  await tracing.shutdown();
});
