/**
 * The export thread (span-export.ts): collects the chunks of encoded spans
 * the main thread posts into export requests of about `exportBatchSpans`
 * spans (or whatever arrived within `exportDelayMs`), sends them with the
 * OTLP exporter, and reports each result back so the main thread logs
 * failures. Spans queued here and in flight stay under `maxQueuedSpans`;
 * past it arriving chunks are dropped and the main thread told. The thread
 * runs at the lowest CPU priority. Flush and shutdown requests are answered
 * by id.
 */
import { constants, setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { createExportQueue, exportSucceeded } from './export-queue.js';
import { createSpanChunkExporter } from './otlp-exporter.js';
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
const send = (message: FromExportWorker): void => port.postMessage(message);
const exporter = createSpanChunkExporter(
  init.endpoint,
  { timeoutMs: init.timeoutMs, headers: init.headers },
  { resourceAttributes: init.resourceAttributes, scope: init.scope },
);

const queue = createExportQueue(exporter, init, (result) => {
  send(exportSucceeded(result) ? { event: 'result', ok: true } : { event: 'result', ok: false, reason: result.error?.message ?? 'unknown' });
});

port.on('message', (message: ToExportWorker) => {
  if ('chunk' in message) {
    send({ event: 'accepted', spans: message.spans });
    if (!queue.add(message.chunk, message.spans)) send({ event: 'dropped', spans: message.spans });
    return;
  }
  const answer = (): void => send({ event: 'done', id: message.id });
  // A failed export has already been reported through its result.
  (message.request === 'flush' ? queue.flush() : queue.shutdown()).then(answer, answer);
});
