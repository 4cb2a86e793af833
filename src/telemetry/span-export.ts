/**
 * How sampled spans leave: the SDK's `BatchSpanProcessor` in front of an
 * exporter (OTLP, or one a test hands in). Spans wait in its queue and go in
 * batches, in the background; the code that ends a span never waits for the
 * collector.
 *
 * The queue is bounded: a collector slower than the server costs dropped
 * spans, never memory or latency. The batch processor drops silently, so
 * this processor applies the same bound in front of it (it counts the spans
 * it handed on against those the batch processor handed to the exporter,
 * which is exactly the batch processor's queue) to count what is dropped
 * and say so in the log, at most once a minute.
 */
import { TraceFlags } from '@opentelemetry/api';
import type { ExportResult } from '@opentelemetry/core';
import { BatchSpanProcessor, type SpanExporter, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { Clock } from '../../supervisors/index.js';
import type { Logger } from './logger.js';

/**
 * Spans waiting for export; past it new spans are dropped. An SDK span of
 * the message path holds about 1 KiB, so a stalled collector bounds the
 * queue near 16 MiB.
 */
export const MAX_QUEUED_SPANS = 16_384;
/** Spans per export request. */
export const EXPORT_BATCH_SPANS = 2_048;
/** The longest a finished span waits before its batch goes. */
export const EXPORT_DELAY_MS = 1_000;
/** A dropping queue is reported at most this often. */
export const DROP_LOG_INTERVAL_MS = 60_000;
export const QUEUE_FULL_MESSAGE = 'span export queue full; spans dropped';

export interface SpanExportOptions {
  timeoutMs: number;
  clock: Clock;
  log?: Logger;
  /** Gets the result of every export request. */
  report?: (result: ExportResult) => void;
}

export interface SpanExport extends SpanProcessor {
  /** Sampled spans dropped since start because the queue was full. */
  dropped(): number;
}

export function createSpanExport(exporter: SpanExporter, options: SpanExportOptions): SpanExport {
  const { clock, log, report } = options;
  /** Spans handed to the batch processor, and those it handed to the exporter: the difference is its queue. */
  let handed = 0;
  let taken = 0;
  let dropped = 0;
  let unreported = 0;
  let lastLine = -Infinity;

  const counted: SpanExporter = {
    export(spans, done) {
      taken += spans.length;
      exporter.export(spans, (result) => {
        report?.(result);
        done(result);
      });
    },
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
  };
  const batch = new BatchSpanProcessor(counted, {
    maxQueueSize: MAX_QUEUED_SPANS,
    maxExportBatchSize: EXPORT_BATCH_SPANS,
    scheduledDelayMillis: EXPORT_DELAY_MS,
    exportTimeoutMillis: options.timeoutMs,
  });

  function drop(): void {
    dropped += 1;
    unreported += 1;
    const now = clock.now();
    if (now - lastLine < DROP_LOG_INTERVAL_MS) return;
    lastLine = now;
    log?.warn({ dropped_spans: unreported, queued_spans: handed - taken }, QUEUE_FULL_MESSAGE);
    unreported = 0;
  }

  return {
    onStart: (span, parent) => batch.onStart(span, parent),
    onEnd(span) {
      if ((span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return;
      if (handed - taken >= MAX_QUEUED_SPANS) return drop();
      handed += 1;
      batch.onEnd(span);
    },
    forceFlush: () => batch.forceFlush(),
    shutdown: () => batch.shutdown(),
    dropped: () => dropped,
  };
}
