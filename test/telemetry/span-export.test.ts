/**
 * The export path of spans: records (span-record.ts), light spans
 * (light-span.ts) and the bounded queue in front of the processor
 * (span-export.ts), in this thread and through the export thread to a real
 * OTLP receiver.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createTraceState, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags, type Span } from '@opentelemetry/api';
import { resources, tracing as sdk } from '@opentelemetry/sdk-node';
import { createSimulatedClock } from '../../supervisors/index.js';
import type { ParentSpan } from '../../src/telemetry/light-span.js';
import { createInThreadSpanExport, POST_BATCH_SPANS } from '../../src/telemetry/span-export.js';
import { hrTimeToMs, readSpans, writeReadableSpan, type SpanBatch } from '../../src/telemetry/span-record.js';
import { SPANS } from '../../src/telemetry/span-names.js';
import { createTracing } from '../../src/telemetry/tracing.js';
import { startHttpReceiver } from './otlp-receiver.js';
import { capturedLogger, memoryTracing, parentOf, tracingConfig } from './telemetry-fixtures.js';

const API_NAME = 'svc.api.send_message';
const SAMPLED: ParentSpan = { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: TraceFlags.SAMPLED, traceState: 'vendor=1' };

/** A span the SDK finished, with every kind of field a record carries. */
async function richSdkSpan(): Promise<sdk.ReadableSpan> {
  const exporter = new sdk.InMemorySpanExporter();
  const provider = new sdk.BasicTracerProvider({ spanProcessors: [new sdk.SimpleSpanProcessor(exporter)] });
  const tracer = provider.getTracer('svc', '9.9.9');
  const remote = trace.setSpanContext(ROOT_CONTEXT, {
    traceId: SAMPLED.traceId,
    spanId: SAMPLED.spanId,
    traceFlags: TraceFlags.SAMPLED,
    traceState: createTraceState('vendor=1'),
    isRemote: true,
  });
  const span = tracer.startSpan('svc.api.deploy_agent', { kind: SpanKind.SERVER, attributes: { text: 'a\tb\nc', count: 3, ok: true, list: ['x', 'y'] } }, remote);
  span.addEvent('checkpoint', { step: 2 });
  span.recordException(new Error('boom'));
  span.addLink({ context: { traceId: 'f'.repeat(32), spanId: 'e'.repeat(16), traceFlags: TraceFlags.NONE }, attributes: { why: 'retry' } });
  span.setStatus({ code: SpanStatusCode.ERROR, message: 'failed' });
  span.end();
  const [finished] = exporter.getFinishedSpans();
  assert.ok(finished);
  await provider.shutdown();
  return finished;
}

test('a record reads back as the span the SDK finished: ids, parent, times, attributes, events, links, status', async () => {
  const original = await richSdkSpan();
  const batch: SpanBatch = [];
  writeReadableSpan(batch, original);
  writeReadableSpan(batch, original);
  const resource = resources.resourceFromAttributes({ 'service.name': 'x' });
  const scope = { name: 'svc', version: '9.9.9' };
  const copies = readSpans(batch, resource, scope);
  assert.equal(copies.length, 2);
  const copy = copies[0]!;
  assert.equal(copy.name, original.name);
  assert.equal(copy.kind, SpanKind.SERVER);
  assert.deepEqual(copy.spanContext().traceId, original.spanContext().traceId);
  assert.equal(copy.spanContext().spanId, original.spanContext().spanId);
  assert.equal(copy.spanContext().traceFlags, TraceFlags.SAMPLED);
  assert.equal(copy.spanContext().traceState?.serialize(), 'vendor=1');
  assert.equal(parentOf(copy), SAMPLED.spanId);
  assert.equal(copy.parentSpanContext?.isRemote, true);
  assert.ok(Math.abs(hrTimeToMs(copy.startTime) - hrTimeToMs(original.startTime)) < 0.001, 'start within 1 µs');
  assert.ok(Math.abs(hrTimeToMs(copy.endTime) - hrTimeToMs(original.endTime)) < 0.001, 'end within 1 µs');
  assert.deepEqual(copy.attributes, { text: 'a\tb\nc', count: 3, ok: true, list: ['x', 'y'] });
  assert.deepEqual(copy.events.map((e) => e.name), ['checkpoint', 'exception']);
  assert.deepEqual(copy.events[0]!.attributes, { step: 2 });
  assert.equal(copy.events[1]!.attributes?.['exception.message'], 'boom');
  assert.equal(copy.links.length, 1);
  assert.equal(copy.links[0]!.context.spanId, 'e'.repeat(16));
  assert.deepEqual(copy.links[0]!.attributes, { why: 'retry' });
  assert.deepEqual(copy.status, { code: SpanStatusCode.ERROR, message: 'failed' });
  assert.equal(copy.resource, copies[1]!.resource, 'one resource object for the batch');
  assert.equal(copy.instrumentationScope, scope);
});

test('a truncated batch is refused, not read as a wrong span', async () => {
  const batch: SpanBatch = [];
  writeReadableSpan(batch, await richSdkSpan());
  const resource = resources.resourceFromAttributes({});
  assert.throws(() => readSpans(batch.slice(0, batch.length - 1), resource, { name: 'svc' }), /ends inside a span/);
  assert.throws(() => readSpans([1, ...batch.slice(1)], resource, { name: 'svc' }), /expected a string/);
});

test('a light span under a sampled parent is exported like an SDK span; under an unsampled one it is not made', async () => {
  const { tracing, spans } = memoryTracing();
  const span = tracing.startLightSpan(SPANS.agentExecute, SpanKind.CONSUMER, SAMPLED, { 'svc.agent.id': 'a1' });
  assert.ok(span);
  assert.ok(span.isRecording());
  assert.match(span.traceparent(), new RegExp(`^00-${SAMPLED.traceId}-${span.spanId}-01$`));
  assert.equal(span.spanContext().traceState?.serialize(), 'vendor=1');
  span.setAttribute('svc.execution.status', 'error');
  span.recordException(new TypeError('bad input'));
  span.setStatus({ code: SpanStatusCode.ERROR, message: 'trap' });
  span.end();
  span.setAttribute('late', 1);
  span.end();
  assert.equal(span.isRecording(), false);
  assert.equal(tracing.startLightSpan(SPANS.agentExecute, SpanKind.CONSUMER, { ...SAMPLED, traceFlags: TraceFlags.NONE }, {}), undefined);

  const [finished, ...rest] = await spans();
  assert.equal(rest.length, 0, 'one span, ended once');
  assert.ok(finished);
  assert.equal(finished.name, SPANS.agentExecute);
  assert.equal(finished.kind, SpanKind.CONSUMER);
  assert.equal(finished.spanContext().traceId, SAMPLED.traceId);
  assert.equal(parentOf(finished), SAMPLED.spanId);
  assert.deepEqual(finished.attributes, { 'svc.agent.id': 'a1', 'svc.execution.status': 'error' });
  assert.deepEqual(finished.status, { code: SpanStatusCode.ERROR, message: 'trap' });
  assert.equal(finished.events[0]?.name, 'exception');
  assert.equal(finished.events[0]?.attributes?.['exception.type'], 'TypeError');
  assert.ok(hrTimeToMs(finished.endTime) >= hrTimeToMs(finished.startTime));
  assert.equal(finished.instrumentationScope.name, 'svc');
  await tracing.shutdown();
});

test('a light span active in a context is the parent of SDK spans started there', async () => {
  const { tracing, spans } = memoryTracing();
  const light = tracing.startLightSpan(SPANS.agentExecute, SpanKind.CONSUMER, SAMPLED, {}) as Span & { spanId: string };
  tracing.withSpan('child', {}, () => undefined, { parent: trace.setSpan(ROOT_CONTEXT, light) });
  light.end();
  const finished = await spans();
  const child = finished.find((s) => s.name === 'child');
  assert.equal(child && parentOf(child), light.spanId);
  assert.equal(child?.spanContext().traceId, SAMPLED.traceId);
  await tracing.shutdown();
});

test('tracing off makes no light spans', async () => {
  const tracing = createTracing(tracingConfig({ enable_tracing: false }), { serviceVersion: '0' });
  assert.equal(tracing.startLightSpan(SPANS.messagesSend, SpanKind.PRODUCER, SAMPLED, {}), undefined);
  await tracing.shutdown();
});

test('the queue holds at most maxQueuedSpans, drops the rest, and says so once per interval', async () => {
  const exporter = new sdk.InMemorySpanExporter();
  const clock = createSimulatedClock(1_000_000);
  const { log, capture } = capturedLogger();
  const queue = createInThreadSpanExport(new sdk.SimpleSpanProcessor(exporter), resources.resourceFromAttributes({}), { name: 'svc' }, { maxQueuedSpans: 3, clock, log });
  const original = await richSdkSpan();
  let written = 0;
  for (let i = 0; i < 10; i++) {
    const batch = queue.open();
    if (batch === undefined) continue;
    writeReadableSpan(batch, original);
    queue.commit();
    written += 1;
  }
  assert.equal(written, 3);
  assert.equal(queue.dropped(), 7);
  const warnings = capture.records().filter((r) => r.msg === 'span export queue full; spans dropped');
  assert.equal(warnings.length, 1, 'one line for the burst');
  assert.equal(warnings[0]?.dropped_spans, 1);
  await queue.flush();
  assert.equal(exporter.getFinishedSpans().length, 3, 'what was queued is exported');
  const again = queue.open();
  assert.ok(again, 'room again once exported');
  writeReadableSpan(again, original);
  queue.commit();
  await queue.flush();
  assert.equal(exporter.getFinishedSpans().length, 4);
  await queue.shutdown();
  assert.equal(queue.open(), undefined, 'nothing after shutdown');
});

test(`a full batch of ${POST_BATCH_SPANS} spans goes to the processor at once, a partial one after a short delay`, async () => {
  const exporter = new sdk.InMemorySpanExporter();
  const clock = createSimulatedClock();
  const queue = createInThreadSpanExport(new sdk.SimpleSpanProcessor(exporter), resources.resourceFromAttributes({}), { name: 'svc' }, { maxQueuedSpans: 4096, clock });
  const original = await richSdkSpan();
  const add = () => {
    writeReadableSpan(queue.open()!, original);
    queue.commit();
  };
  for (let i = 0; i < POST_BATCH_SPANS; i++) add();
  assert.equal(exporter.getFinishedSpans().length, POST_BATCH_SPANS);
  add();
  assert.equal(exporter.getFinishedSpans().length, POST_BATCH_SPANS, 'a partial batch waits');
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(exporter.getFinishedSpans().length, POST_BATCH_SPANS + 1, 'and goes within the delay');
  await queue.shutdown();
});

test('through the export thread: light and SDK spans of one trace reach an OTLP receiver, and shutdown ends the thread', async () => {
  const receiver = await startHttpReceiver();
  const tracing = createTracing(tracingConfig({ otlp_endpoint: receiver.url }), { serviceVersion: '1.2.3' });
  try {
    tracing.withSpan(API_NAME, {}, () => {
      const caller = trace.getActiveSpan()!.spanContext();
      const parent: ParentSpan = { traceId: caller.traceId, spanId: caller.spanId, traceFlags: caller.traceFlags, traceState: '' };
      tracing.startLightSpan(SPANS.messagesSend, SpanKind.PRODUCER, parent, { 'svc.message.id': 'm1' })?.end();
    });
    await tracing.flush();
    const received = await receiver.waitForSpans(2);
    const api = received.find((s) => s.name === API_NAME);
    const send = received.find((s) => s.name === SPANS.messagesSend);
    assert.ok(api && send);
    assert.equal(send.parentSpanId, api.spanId);
    assert.equal(send.traceId, api.traceId);
    assert.equal(send.kind, SpanKind.PRODUCER + 1, 'OTLP kinds are the API kinds plus one');
    assert.equal(send.attributes['svc.message.id'], 'm1');
    assert.equal(send.resource['service.version'], '1.2.3');
  } finally {
    await tracing.shutdown();
    await receiver.close();
  }
});

