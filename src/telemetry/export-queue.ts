/**
 * Chunks of encoded spans waiting to be exported: a request goes as soon
 * as `exportBatchSpans` spans wait, or `exportDelayMs` after the first of
 * them arrived, and carries every chunk waiting then. Spans waiting and in
 * flight stay under `maxQueuedSpans`; a chunk past it is refused (and
 * counted as dropped by the caller).
 */
import { core } from '@opentelemetry/sdk-node';
import type { SpanChunkExporter } from './otlp-exporter.js';

type ExportResult = Parameters<Parameters<SpanChunkExporter['export']>[1]>[0];

export interface ExportQueueSettings {
  maxQueuedSpans: number;
  exportBatchSpans: number;
  exportDelayMs: number;
}

export interface ExportQueue {
  /** Queues a chunk of `spans` spans; false when the queue is full and the chunk is dropped. */
  add(chunk: Uint8Array, spans: number): boolean;
  /** Sends what waits and resolves when every request in flight has answered. */
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
  let pending: Uint8Array[] = [];
  let pendingSpans = 0;
  let inFlight = 0;
  let timer: NodeJS.Timeout | undefined;

  function exportPending(): void {
    if (timer !== undefined) {
      clearTimeout(timer);
      timer = undefined;
    }
    if (pendingSpans === 0) return;
    const request = { chunks: pending, spans: pendingSpans };
    pending = [];
    pendingSpans = 0;
    inFlight += request.spans;
    exporter.export(request, (result) => {
      inFlight -= request.spans;
      onResult(result, request.chunks);
    });
  }

  return {
    add(chunk, spans) {
      if (pendingSpans + inFlight + spans > settings.maxQueuedSpans) return false;
      pending.push(chunk);
      pendingSpans += spans;
      if (pendingSpans >= settings.exportBatchSpans) exportPending();
      else timer ??= setTimeout(exportPending, settings.exportDelayMs).unref();
      return true;
    },
    flush() {
      exportPending();
      return exporter.forceFlush();
    },
    shutdown() {
      exportPending();
      return exporter.shutdown();
    },
  };
}

export const exportSucceeded = (result: ExportResult): boolean => result.code === core.ExportResultCode.SUCCESS;
