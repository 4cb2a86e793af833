/**
 * Chunks of encoded spans waiting to be exported (the export thread's side
 * of span-export.ts). The main thread posts several chunks at a time; each
 * goes at once as its own request while fewer than `maxRequests` are in
 * flight, and the last free slot takes every chunk still waiting, joined
 * into one request. Joining costs a copy on this thread and a large body
 * for the collector, which slowed the agents more than a few concurrent
 * requests (docs/benchmarks.md), so it is kept for a slow collector: it
 * gets fewer, larger requests instead of failed ones. Spans waiting and in
 * flight stay under `maxQueuedSpans`; a post past it is refused (and
 * counted as dropped by the caller).
 */
import { core } from '@opentelemetry/sdk-node';
import type { SpanChunkExporter, SpanChunks } from './otlp-exporter.js';

type ExportResult = Parameters<Parameters<SpanChunkExporter['export']>[1]>[0];

export interface ExportQueueSettings {
  maxQueuedSpans: number;
  /** Requests in flight at once: the exporter's own limit, past which it fails a request at once. */
  maxRequests: number;
}

export interface ExportQueue {
  /** Queues chunks, `spans[i]` spans in `chunks[i]`; false when the queue is full and they are all dropped. */
  add(chunks: readonly Uint8Array[], spans: readonly number[]): boolean;
  /** Sends what waits (as slots free) and resolves when every request has answered. */
  flush(): Promise<void>;
  /** Flushes, then closes the exporter. */
  shutdown(): Promise<void>;
}

/** `onResult` gets each request's result and its chunks, which the exporter is done with. */
export function createExportQueue(
  exporter: SpanChunkExporter,
  settings: ExportQueueSettings,
  onResult: (result: ExportResult, chunks: readonly Uint8Array[]) => void,
): ExportQueue {
  const pending: Uint8Array[] = [];
  const pendingCounts: number[] = [];
  let pendingSpans = 0;
  let inFlightSpans = 0;
  let requests = 0;
  /** Flushes waiting for the queue to empty. */
  let drained: (() => void)[] = [];

  function settle(): void {
    if (requests > 0 || pendingSpans > 0) return;
    const waiting = drained;
    drained = [];
    for (const done of waiting) done();
  }

  function exportPending(): void {
    while (pending.length > 0 && requests < settings.maxRequests) {
      // One request per chunk while slots last; the last slot takes all that wait.
      const take = settings.maxRequests - requests === 1 ? pending.length : 1;
      const counts = pendingCounts.splice(0, take);
      send({ chunks: pending.splice(0, take), spans: counts.reduce((sum, count) => sum + count, 0) });
    }
  }

  function send(request: SpanChunks): void {
    pendingSpans -= request.spans;
    inFlightSpans += request.spans;
    requests += 1;
    exporter.export(request, (result) => {
      inFlightSpans -= request.spans;
      onResult(result, request.chunks);
      // OpenTelemetry's exporter frees its slot only after this callback returns, a microtask later.
      setImmediate(() => {
        requests -= 1;
        exportPending();
        settle();
      });
    });
  }

  async function flush(): Promise<void> {
    exportPending();
    if (requests > 0 || pendingSpans > 0) await new Promise<void>((resolve) => drained.push(resolve));
    await exporter.forceFlush();
  }

  return {
    add(chunks, spans) {
      const total = spans.reduce((sum, count) => sum + count, 0);
      if (pendingSpans + inFlightSpans + total > settings.maxQueuedSpans) return false;
      pending.push(...chunks);
      pendingCounts.push(...spans);
      pendingSpans += total;
      exportPending();
      return true;
    },
    flush,
    async shutdown() {
      await flush();
      await exporter.shutdown();
    },
  };
}

export const exportSucceeded = (result: ExportResult): boolean => result.code === core.ExportResultCode.SUCCESS;
