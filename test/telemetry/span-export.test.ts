/**
 * The way out of sampled spans (span-export.ts): the batch processor's
 * queue is bounded, what is past it is dropped, counted and said once per
 * interval, and every export's result is reported.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { BasicTracerProvider, SamplingDecision, type ReadableSpan, type Sampler, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { createSimulatedClock } from '../../supervisors/index.js';
import { createSpanExport, DROP_LOG_INTERVAL_MS, EXPORT_BATCH_SPANS, MAX_QUEUED_SPANS, QUEUE_FULL_MESSAGE } from '../../src/telemetry/span-export.js';
import { capturedLogger } from './telemetry-fixtures.js';

/** An exporter that keeps each request unanswered until `answer`. */
function heldExporter() {
  const spans: ReadableSpan[] = [];
  const held: (() => void)[] = [];
  const exporter: SpanExporter = {
    export(batch, done) {
      spans.push(...batch);
      held.push(() => done({ code: ExportResultCode.SUCCESS }));
    },
    shutdown: () => Promise.resolve(),
  };
  return {
    exporter,
    spans,
    requests: () => held.length,
    answer() {
      for (const done of held.splice(0)) done();
    },
  };
}

function tracerOver(processor: ReturnType<typeof createSpanExport>) {
  const provider = new BasicTracerProvider({ spanProcessors: [processor] });
  const tracer = provider.getTracer('svc');
  return { provider, end: (count: number) => {
    for (let i = 0; i < count; i++) tracer.startSpan('svc.api.health').end();
  } };
}

test('the queue holds MAX_QUEUED_SPANS behind the request in flight; the rest is dropped, counted and said once per interval', async () => {
  const clock = createSimulatedClock(1_000_000);
  const { log, capture } = capturedLogger();
  const held = heldExporter();
  const spanExport = createSpanExport(held.exporter, { timeoutMs: 60_000, clock, log });
  const { provider, end } = tracerOver(spanExport);
  // A full batch leaves at once and waits on the collector; the queue behind it fills.
  end(EXPORT_BATCH_SPANS + MAX_QUEUED_SPANS);
  assert.equal(held.requests(), 1);
  assert.equal(spanExport.dropped(), 0);
  end(5);
  assert.equal(spanExport.dropped(), 5);
  const lines = () => capture.records().filter((r) => r.msg === QUEUE_FULL_MESSAGE);
  assert.equal(lines().length, 1, 'one line for the burst');
  assert.deepEqual([lines()[0]?.level, lines()[0]?.dropped_spans, lines()[0]?.queued_spans], [40, 1, MAX_QUEUED_SPANS]);
  clock.increment(DROP_LOG_INTERVAL_MS);
  end(1);
  assert.equal(lines().length, 2);
  assert.equal(lines()[1]?.dropped_spans, 5, 'the drops since the last line');

  // Once the collector answers, the queue drains and there is room again.
  held.answer();
  const flushed = spanExport.forceFlush();
  held.answer();
  await flushed;
  assert.equal(held.spans.length, EXPORT_BATCH_SPANS + MAX_QUEUED_SPANS);
  end(1);
  assert.equal(spanExport.dropped(), 6);
  const last = spanExport.forceFlush();
  held.answer();
  await last;
  assert.equal(held.spans.length, EXPORT_BATCH_SPANS + MAX_QUEUED_SPANS + 1);
  await provider.shutdown();
});

test('only sampled spans are queued, and every export result is reported', async () => {
  const results: ExportResult[] = [];
  const exported: ReadableSpan[] = [];
  let fail = true;
  const exporter: SpanExporter = {
    export(batch, done) {
      exported.push(...batch);
      done(fail ? { code: ExportResultCode.FAILED, error: new Error('refused') } : { code: ExportResultCode.SUCCESS });
    },
    shutdown: () => Promise.resolve(),
  };
  const spanExport = createSpanExport(exporter, { timeoutMs: 1_000, clock: createSimulatedClock(), report: (result) => results.push(result) });
  // A span may be recorded without being sampled (for local processors); it is not exported.
  const sampler: Sampler = {
    shouldSample: (_context, _traceId, name) => ({ decision: name === 'recorded only' ? SamplingDecision.RECORD : SamplingDecision.RECORD_AND_SAMPLED }),
    toString: () => 'by name',
  };
  const provider = new BasicTracerProvider({ sampler, spanProcessors: [spanExport] });
  const tracer = provider.getTracer('svc');
  tracer.startSpan('sampled').end();
  const recorded = tracer.startSpan('recorded only');
  assert.ok(recorded.isRecording());
  recorded.end();
  await spanExport.forceFlush().catch(() => undefined);
  fail = false;
  tracer.startSpan('again').end();
  await spanExport.forceFlush();
  assert.deepEqual(exported.map((s) => s.name), ['sampled', 'again']);
  assert.deepEqual(results.map((r) => [r.code, r.error?.message]), [
    [ExportResultCode.FAILED, 'refused'],
    [ExportResultCode.SUCCESS, undefined],
  ]);
  await provider.shutdown();
});
