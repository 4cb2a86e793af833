/**
 * The export thread's queue (export-queue.ts) in front of the real OTLP/HTTP
 * exporter and a collector on loopback that answers only when told: chunks
 * go one per request while slots last, a slow collector gets at most
 * `EXPORT_CONCURRENCY` requests at once, and what waits behind them goes as
 * one joined request, none refused.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SpanKind, SpanStatusCode, TraceFlags } from '@opentelemetry/api';
import { createExportQueue, exportSucceeded } from '../../src/telemetry/export-queue.js';
import { createSpanChunkExporter, EXPORT_CONCURRENCY } from '../../src/telemetry/otlp-exporter.js';
import { createRequestFrame } from '../../src/telemetry/otlp-span-encoding.js';
import { ProtoWriter } from '../../src/telemetry/proto-writer.js';
import { SPANS } from '../../src/telemetry/span-names.js';
import { writeSpan, type SpanHead } from '../../src/telemetry/span-record.js';
import { startHeldCollector } from './otlp-receiver.js';

const FRAME = createRequestFrame({ resourceAttributes: { 'service.name': 'svc' }, scope: { name: 'svc' } });

/** A chunk of `count` spans framed as a whole request, as the main thread posts it. */
function framedChunk(count: number, first: number): Uint8Array {
  const writer = new ProtoWriter(FRAME.maxBytes + 128 * count);
  writer.pos = FRAME.maxBytes;
  for (let i = 0; i < count; i++) {
    const head: SpanHead = {
      name: SPANS.messagesSend,
      kind: SpanKind.PRODUCER,
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: (first + i + 1).toString(16).padStart(16, '0'),
      traceFlags: TraceFlags.SAMPLED,
      traceState: '',
      parentSpanId: '',
      parentIsRemote: false,
      startTime: 1_700_000_000_000,
      endTime: 1_700_000_000_001,
      statusCode: SpanStatusCode.UNSET,
      statusMessage: '',
    };
    writeSpan(writer, head, { 'svc.message.id': `m${first + i}` });
  }
  return writer.bytes.subarray(FRAME.write(writer.bytes, FRAME.maxBytes, writer.pos), writer.pos);
}

test('chunks go as their own requests while slots last; a slow collector gets at most EXPORT_CONCURRENCY at once, and what waits goes joined', async () => {
  const collector = await startHeldCollector();
  const exporter = createSpanChunkExporter({ protocol: 'http', url: `${collector.url}/v1/traces` }, { timeoutMs: 10_000, headers: {} });
  const results: boolean[] = [];
  const returned: number[] = [];
  const queue = createExportQueue(exporter, { maxQueuedSpans: 1_000, maxRequests: EXPORT_CONCURRENCY }, (result, chunks) => {
    results.push(exportSucceeded(result));
    returned.push(chunks.length);
  });
  try {
    const posts = EXPORT_CONCURRENCY + 6;
    for (let post = 0; post < posts; post++) assert.equal(queue.add([framedChunk(5, post * 10), framedChunk(5, post * 10 + 5)], [5, 5]), true);
    await collector.waitForOpen(EXPORT_CONCURRENCY);
    assert.equal(collector.requests.length, EXPORT_CONCURRENCY, 'the chunks past the limit wait in the queue');
    assert.equal(results.length, 0, 'none was refused');
    collector.release();
    await queue.flush();
    assert.equal(collector.mostOpen(), EXPORT_CONCURRENCY);
    const waited = posts * 2 - EXPORT_CONCURRENCY;
    assert.deepEqual(
      collector.requests.map((request) => request.spans),
      [...Array.from({ length: EXPORT_CONCURRENCY }, () => 5), waited * 5],
      'the first chunks each as a request, then all that waited as one',
    );
    assert.deepEqual(
      collector.requests.map((request) => request.resourceSpans),
      [...Array.from({ length: EXPORT_CONCURRENCY }, () => 1), waited],
      'each chunk of the joined request is a resource_spans entry',
    );
    assert.deepEqual(results, Array.from({ length: EXPORT_CONCURRENCY + 1 }, () => true));
    assert.deepEqual(returned, [...Array.from({ length: EXPORT_CONCURRENCY }, () => 1), waited], 'every chunk came back to its owner');
  } finally {
    collector.release();
    await queue.shutdown();
    await collector.close();
  }
});

test('spans waiting and in flight stay under maxQueuedSpans: a post past it is refused, later ones fit again', async () => {
  const collector = await startHeldCollector();
  const exporter = createSpanChunkExporter({ protocol: 'http', url: `${collector.url}/v1/traces` }, { timeoutMs: 10_000, headers: {} });
  const queue = createExportQueue(exporter, { maxQueuedSpans: 25, maxRequests: 1 }, () => undefined);
  try {
    assert.equal(queue.add([framedChunk(10, 0)], [10]), true, 'in flight');
    assert.equal(queue.add([framedChunk(10, 10)], [10]), true, 'waiting');
    assert.equal(queue.add([framedChunk(5, 20), framedChunk(5, 25)], [5, 5]), false, '30 would pass 25: the whole post is refused');
    assert.equal(queue.add([framedChunk(5, 30)], [5]), true, '25 fit');
    await collector.waitForOpen(1);
    collector.release();
    await queue.flush();
    assert.deepEqual(collector.requests.map((request) => request.spans), [10, 15]);
    assert.equal(queue.add([framedChunk(10, 40)], [10]), true, 'room again once answered');
    await queue.flush();
    assert.equal(collector.requests.at(-1)?.spans, 10);
  } finally {
    collector.release();
    await queue.shutdown();
    await collector.close();
  }
});
