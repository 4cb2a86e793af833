/**
 * The export path of spans: light spans (light-span.ts) and the bounded
 * queue in front of the processor (span-export.ts), in this thread and
 * through the export thread to a real OTLP receiver. The encoding itself is
 * tested in otlp-span-encoding.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createTraceState, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags, type Span } from '@opentelemetry/api';
import { resources, tracing as sdk } from '@opentelemetry/sdk-node';
import { createSimulatedClock } from '../../supervisors/index.js';
import type { ParentSpan } from '../../src/telemetry/light-span.js';
import { EXPORT_CONCURRENCY } from '../../src/telemetry/otlp-exporter.js';
import { createInThreadSpanExport, createThreadSpanExport, POST_BATCH_CHUNKS, POST_BATCH_SPANS, POST_BYTES, POST_DELAY_MS } from '../../src/telemetry/span-export.js';
import { hrTimeToMs, writeReadableSpan } from '../../src/telemetry/span-record.js';
import { SPANS } from '../../src/telemetry/span-names.js';
import { createTracing } from '../../src/telemetry/tracing.js';
import { startHeldCollector, startHttpReceiver } from './otlp-receiver.js';
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

/** A queue in this thread, to an in-memory exporter; `add` writes one copy of `span` and reports the chunks opened so far. */
function chunkCounting(span: sdk.ReadableSpan) {
  const exporter = new sdk.InMemorySpanExporter();
  const queue = createInThreadSpanExport(new sdk.SimpleSpanProcessor(exporter), resources.resourceFromAttributes({}), { name: 'svc' }, { maxQueuedSpans: 100_000, clock: createSimulatedClock() });
  let written = 0;
  let chunks = 0;
  let last: unknown;
  const add = () => {
    const into = queue.open()!;
    if (into !== last) chunks += 1;
    last = into;
    writeReadableSpan(into, span);
    queue.commit();
    written += 1;
  };
  return { exporter, queue, add, written: () => written, chunks: () => chunks };
}

test('full chunks go to the processor together once they hold POST_BATCH_SPANS spans, and a partial one within the delay', async () => {
  const made = memoryTracing();
  // About the size of a message-path span (some 300 bytes), so a chunk holds fewer than POST_BATCH_SPANS.
  const attributes = { 'svc.message.id': 'm'.repeat(36), 'svc.agent.id': 'a'.repeat(36), 'svc.conversation.id': 'c'.repeat(36), 'svc.message.type': 'inform' };
  made.tracing.startLightSpan(SPANS.messagesSend, SpanKind.PRODUCER, SAMPLED, attributes)?.end();
  const [small] = await made.spans();
  assert.ok(small);
  const { exporter, queue, add, written, chunks } = chunkCounting(small);
  while (exporter.getFinishedSpans().length === 0) add();
  assert.equal(exporter.getFinishedSpans().length, written(), 'the held chunks went with the last span of the last one');
  assert.ok(written() >= POST_BATCH_SPANS && written() < POST_BATCH_SPANS + POST_BYTES / 50, `${written()} small spans went in one post`);
  assert.ok(chunks() >= 2 && chunks() <= POST_BATCH_CHUNKS, `${chunks()} chunks, posted by their spans' count`);
  add();
  assert.equal(exporter.getFinishedSpans().length, written() - 1, 'a partial chunk waits');
  await new Promise((resolve) => setTimeout(resolve, POST_DELAY_MS * 1.5));
  assert.equal(exporter.getFinishedSpans().length, written(), 'and goes within the delay');
  await queue.shutdown();
});

test('large spans go once POST_BATCH_CHUNKS chunks are full, and a flush posts the held ones at once', async () => {
  const { exporter, queue, add, written, chunks } = chunkCounting(await richSdkSpan());
  while (exporter.getFinishedSpans().length === 0) add();
  assert.equal(exporter.getFinishedSpans().length, written());
  assert.ok(written() < POST_BATCH_SPANS, `${written()} spans of about 900 bytes`);
  assert.equal(chunks(), POST_BATCH_CHUNKS, 'the held chunks went once they were as many as POST_BATCH_CHUNKS');
  while (chunks() < POST_BATCH_CHUNKS + 3) add();
  const before = exporter.getFinishedSpans().length;
  assert.ok(written() > before, 'a full chunk and a partial one are held');
  await queue.flush();
  assert.equal(exporter.getFinishedSpans().length, written(), 'flush posted them');
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


test('through the export thread, a full chunk leaves as one request and its buffer comes back for the next spans', async () => {
  const receiver = await startHttpReceiver();
  const original = await richSdkSpan();
  const results: boolean[] = [];
  const queue = createThreadSpanExport(
    {
      endpoint: { protocol: 'http', url: `${receiver.url}/v1/traces` },
      timeoutMs: 5_000,
      headers: {},
      resourceAttributes: { 'service.name': 'svc' },
      scope: { name: 'svc' },
      maxQueuedSpans: 100_000,
    },
    (result) => results.push(result.code === 0),
    { maxQueuedSpans: 100_000, clock: createSimulatedClock() },
  );
  try {
    const chunks = 8;
    let written = 0;
    for (let round = 0; round < chunks; round++) {
      // Spans until the chunk fills and is posted (a new chunk opens); then its export is awaited, so its buffer can come back.
      const chunk = queue.open();
      for (let into = chunk; into === chunk; into = queue.open()) {
        writeReadableSpan(into!, original);
        queue.commit();
        written += 1;
      }
      await queue.flush();
    }
    await queue.flush();
    const received = await receiver.waitForSpans(written);
    assert.equal(received.length, written, 'every span arrived once');
    assert.ok(received.every((span) => span.name === original.name && span.resource['service.name'] === 'svc'));
    assert.ok(results.length >= chunks && results.every(Boolean));
    assert.ok(queue.chunksAllocated() <= 3, `${queue.chunksAllocated()} chunk buffers allocated for ${chunks} full chunks`);
  } finally {
    await queue.shutdown();
    await receiver.close();
  }
});

test('through the export thread, a collector that never answers holds shutdown for otlp_timeout once, even with chunks queued behind the requests in flight', async () => {
  const collector = await startHeldCollector();
  const { log, capture } = capturedLogger();
  const original = await richSdkSpan();
  const timeoutMs = 1_000;
  const queue = createThreadSpanExport(
    {
      endpoint: { protocol: 'http', url: `${collector.url}/v1/traces` },
      timeoutMs,
      headers: {},
      resourceAttributes: { 'service.name': 'svc' },
      scope: { name: 'svc' },
      maxQueuedSpans: 100_000,
    },
    () => undefined,
    { maxQueuedSpans: 100_000, clock: createSimulatedClock(), log },
  );
  try {
    // More full chunks than requests may be in flight: the rest waits for a slot, one timeout later.
    let chunks = 0;
    for (let last = queue.open(); chunks < EXPORT_CONCURRENCY + 2; ) {
      writeReadableSpan(last!, original);
      queue.commit();
      const next = queue.open();
      if (next !== last) chunks += 1;
      last = next;
    }
    const flushed = queue.flush();
    await collector.waitForOpen(EXPORT_CONCURRENCY);
    const started = performance.now();
    await queue.shutdown();
    const took = performance.now() - started;
    // Waiting for the queued chunks' own request as well took two timeouts and more.
    assert.ok(took < timeoutMs * 1.5, `shutdown took ${took.toFixed(0)} ms with otlp_timeout ${timeoutMs} ms`);
    await flushed;
    const cut = capture.records().filter((r) => r.msg === 'trace export cut short at stop; the spans still queued are dropped');
    assert.equal(cut.length, 1);
    assert.equal(cut[0]?.otlp_timeout_ms, timeoutMs);
  } finally {
    collector.release();
    await collector.close();
  }
});

test('through the export thread, an export never given spans flushes at once and stops without asking its thread anything', async () => {
  const receiver = await startHttpReceiver();
  const init = {
    endpoint: { protocol: 'http' as const, url: `${receiver.url}/v1/traces` },
    timeoutMs: 5_000,
    headers: {},
    resourceAttributes: { 'service.name': 'svc' },
    scope: { name: 'svc' },
    maxQueuedSpans: 1_000,
  };
  const options = { maxQueuedSpans: 1_000, clock: createSimulatedClock() };
  try {
    // Two exports made together: one given a span, whose flush waits for its thread to start and export,
    // and an idle one. The idle one's flush waits for nothing, not even the next turn of the event loop
    // (no timing: the order of events says it), and its stop sends its thread no request.
    const used = createThreadSpanExport(init, () => undefined, options);
    // With an `otlp_timeout` of 1 ms, a stop that asked its thread anything would give up on the answer
    // (a thread takes far longer to start) and say so; this one has nothing to ask.
    const { log, capture } = capturedLogger();
    const idle = createThreadSpanExport({ ...init, timeoutMs: 1 }, () => undefined, { ...options, log });
    writeReadableSpan(used.open()!, await richSdkSpan());
    used.commit();
    const usedFlushed = used.flush();
    let turned = false;
    setImmediate(() => {
      turned = true;
    });
    await idle.flush();
    assert.equal(turned, false, 'an idle flush resolved only after a turn of the event loop');
    await idle.shutdown();
    await usedFlushed;
    await used.shutdown();
    assert.deepEqual(capture.records().map((r) => r.msg), [], 'the idle stop waited for its thread');
    assert.equal(receiver.spans.length, 1, 'the used export reached the receiver');
  } finally {
    await receiver.close();
  }
});
