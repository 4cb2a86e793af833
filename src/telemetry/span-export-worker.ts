/**
 * The export thread (span-export.ts): the chunks the main thread posts are
 * whole OTLP requests; it sends each as its own request with the OTLP
 * exporter (export-queue.ts says when chunks are joined instead), and
 * reports each result back so the main thread logs failures. Once a request
 * has been delivered, its chunk buffers go back to the main thread for reuse. Spans queued here and in flight stay under
 * `maxQueuedSpans`; past it arriving chunks are dropped and the main thread
 * told. The thread runs at the lowest CPU priority. Flush and shutdown
 * requests are answered by id.
 */
import { constants, setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { createExportQueue, exportSucceeded } from './export-queue.js';
import { createSpanChunkExporter, EXPORT_CONCURRENCY } from './otlp-exporter.js';
import type { ExportWorkerInit, FromExportWorker, ToExportWorker } from './span-export.js';

const port = parentPort;
if (port === null) throw new Error('span-export-worker runs as a worker thread');
const init = workerData as ExportWorkerInit;

// Tracing must never slow the agents: this thread takes the lowest CPU priority (on Linux, nice is per
// thread), so on a busy machine it runs in the time the main and executor threads leave, and when that
// is not enough its queue fills and spans are dropped (and logged) instead.
try {
  setPriority(constants.priority.PRIORITY_LOW);
} catch {
  // A platform that refuses leaves the thread at normal priority.
}
const send = (message: FromExportWorker, buffers: ArrayBuffer[] = []): void => port.postMessage(message, buffers);
const exporter = createSpanChunkExporter(init.endpoint, { timeoutMs: init.timeoutMs, headers: init.headers });

/** The buffers of `chunks`, to hand back. */
const buffersOf = (chunks: readonly Uint8Array[]): ArrayBuffer[] => chunks.map((chunk) => chunk.buffer as ArrayBuffer);

const queue = createExportQueue(exporter, { maxQueuedSpans: init.maxQueuedSpans, maxRequests: EXPORT_CONCURRENCY }, (result, chunks) => {
  if (exportSucceeded(result)) {
    const buffers = buffersOf(chunks);
    send({ event: 'result', ok: true, buffers }, buffers);
    return;
  }
  // A failed request may have been cut off while its body was still being written; its buffers are not reused.
  send({ event: 'result', ok: false, reason: result.error?.message ?? 'unknown', buffers: [] });
});

port.on('message', (message: ToExportWorker) => {
  if ('chunks' in message) {
    const spans = message.spans.reduce((sum, count) => sum + count, 0);
    send({ event: 'accepted', spans });
    if (!queue.add(message.chunks, message.spans)) {
      const buffers = buffersOf(message.chunks);
      send({ event: 'dropped', spans, buffers }, buffers);
    }
    return;
  }
  const answer = (): void => send({ event: 'done', id: message.id });
  // A failed export has already been reported through its result.
  (message.request === 'flush' ? queue.flush() : queue.shutdown()).then(answer, answer);
});
