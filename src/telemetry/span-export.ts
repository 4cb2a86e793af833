/**
 * The way finished spans leave the process. The main thread only appends
 * each sampled span to a batch of plain values (span-record.ts) and posts
 * full batches to an export thread (span-export-worker.ts), where the SDK's
 * `BatchSpanProcessor` and OTLP exporter build, serialize and send the
 * requests. Building and serializing OTLP took about a third of the main
 * thread at 50k spans a second; it now runs beside the agents' executor
 * threads instead of in front of them.
 *
 * Memory is bounded at each step: spans posted and not yet taken by the
 * export thread plus spans waiting in the batch stay under
 * `maxQueuedSpans`, and the export thread drops past the same bound when a
 * collector is slower than the server; drops are logged at most once a
 * minute.
 *
 * With an exporter handed in (tests, benchmarks) the same batches are read
 * back and handed to a processor on the main thread instead, so every span
 * still makes the round trip through its record.
 */
import type { Worker } from 'node:worker_threads';
import type { Attributes } from '@opentelemetry/api';
import { core, type resources, type tracing } from '@opentelemetry/sdk-node';
import type { Clock } from '../../supervisors/index.js';
import { siblingModule, startModuleWorker } from '../module-worker.js';
import type { DeferredSpan, SpanBatchSink } from './light-span.js';
import type { Logger } from './logger.js';
import type { OtlpEndpoint } from './otlp-endpoint.js';
import { readSpans, type SpanBatch } from './span-record.js';

type ReadableSpan = tracing.ReadableSpan;
type ExportResult = Parameters<Parameters<tracing.SpanExporter['export']>[1]>[0];

/** Spans in a batch posted to the export thread; a partial batch goes after `POST_DELAY_MS`. */
export const POST_BATCH_SPANS = 1024;
export const POST_DELAY_MS = 100;
/** A dropping queue is reported at most this often. */
export const DROP_LOG_INTERVAL_MS = 60_000;

export interface ExportWorkerInit {
  endpoint: OtlpEndpoint;
  timeoutMs: number;
  headers: Record<string, string>;
  resourceAttributes: Attributes;
  scope: { name: string; version?: string };
  /** Spans the thread holds, queued and in flight; past it arriving batches are dropped. */
  maxQueuedSpans: number;
  /** Spans that make an export request go at once. */
  exportBatchSpans: number;
  /** The longest a span waits for more to fill its request. */
  exportDelayMs: number;
}

/** Main thread to export thread: a batch of spans, or a request answered by id. */
export type ToExportWorker = { batch: SpanBatch; spans: number } | { request: 'flush' | 'shutdown'; id: number };
/** Export thread to main thread. */
export type FromExportWorker =
  | { event: 'accepted'; spans: number }
  | { event: 'dropped'; spans: number }
  | { event: 'result'; ok: boolean; reason?: string }
  | { event: 'done'; id: number };

/** Where posted batches go: the export thread, or a processor in this thread. */
interface Delivery {
  /** Takes `batch` (of `spans` spans); `accepted` is called with its count once the processor has it. */
  deliver(batch: SpanBatch, spans: number): void;
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

export interface SpanExport extends SpanBatchSink {
  /** Posts what is batched and waits until the processor has exported it. Never rejects. */
  flush(): Promise<void>;
  /** Flushes, then stops; spans ended afterwards are dropped. Idempotent; never rejects. */
  shutdown(): Promise<void>;
  /** Spans dropped because the queue was full, since start. */
  dropped(): number;
}

export interface SpanExportOptions {
  maxQueuedSpans: number;
  clock: Clock;
  log?: Logger;
}

/** What a delivery reports back: spans the processor took, and spans it dropped. */
interface DeliveryEvents {
  accepted(spans: number): void;
  dropped(spans: number): void;
}

function createSpanExport(delivery: Delivery, options: SpanExportOptions, connect: (events: DeliveryEvents) => void): SpanExport {
  let batch: SpanBatch = [];
  let batched = 0;
  let posted = 0;
  let dropped = 0;
  let unreportedDrops = 0;
  let lastDropLine = -Infinity;
  let timer: NodeJS.Timeout | undefined;
  let stopped: Promise<void> | undefined;
  let deferred: DeferredSpan[] = [];
  let writing: NodeJS.Immediate | undefined;

  connect({
    accepted(spans) {
      posted -= spans;
    },
    dropped: (spans) => drop(spans),
  });

  function post(): void {
    if (timer !== undefined) {
      clearTimeout(timer);
      timer = undefined;
    }
    if (batched === 0) return;
    const full = batch;
    const spans = batched;
    batch = [];
    batched = 0;
    posted += spans;
    delivery.deliver(full, spans);
  }

  function drop(spans = 1): undefined {
    dropped += spans;
    unreportedDrops += spans;
    const now = options.clock.now();
    if (now - lastDropLine >= DROP_LOG_INTERVAL_MS) {
      lastDropLine = now;
      options.log?.warn({ dropped_spans: unreportedDrops, queued_spans: posted + batched }, 'span export queue full; spans dropped');
      unreportedDrops = 0;
    }
    return undefined;
  }

  function open(): SpanBatch | undefined {
    if (stopped !== undefined || posted + batched >= options.maxQueuedSpans) return drop();
    return batch;
  }

  function commit(): void {
    batched += 1;
    if (batched >= POST_BATCH_SPANS) post();
    else if (timer === undefined) timer = setTimeout(post, POST_DELAY_MS).unref();
  }

  function writeDeferred(): void {
    if (writing !== undefined) {
      clearImmediate(writing);
      writing = undefined;
    }
    const spans = deferred;
    deferred = [];
    for (const span of spans) {
      const into = open();
      if (into === undefined) continue;
      span.writeTo(into);
      commit();
    }
  }

  return {
    open,
    commit,
    defer(span) {
      deferred.push(span);
      writing ??= setImmediate(writeDeferred).unref();
    },
    async flush() {
      if (stopped !== undefined) return stopped;
      writeDeferred();
      post();
      await delivery.flush().catch(() => undefined);
    },
    shutdown() {
      if (stopped === undefined) {
        writeDeferred();
        post();
        stopped = delivery.shutdown().catch(() => undefined);
      }
      return stopped;
    },
    dropped: () => dropped,
  };
}

/** Spans exported by `processor` on this thread (an exporter handed in by a test or benchmark). */
export function createInThreadSpanExport(
  processor: tracing.SpanProcessor,
  resource: resources.Resource,
  scope: ReadableSpan['instrumentationScope'],
  options: SpanExportOptions,
): SpanExport {
  let events: DeliveryEvents | undefined;
  return createSpanExport(
    {
      deliver(batch, spans) {
        for (const span of readSpans(batch, resource, scope)) processor.onEnd(span);
        events?.accepted(spans);
      },
      flush: () => processor.forceFlush(),
      shutdown: () => processor.shutdown(),
    },
    options,
    (connected) => {
      events = connected;
    },
  );
}

/**
 * Spans exported from the export thread. The thread starts with the first
 * batch, so a server that never samples a span never starts it. `report`
 * gets the result of every export request (otlp-exporter.ts logs failures).
 */
export function createThreadSpanExport(init: ExportWorkerInit, report: (result: ExportResult) => void, options: SpanExportOptions): SpanExport {
  let worker: Worker | undefined;
  let failed = false;
  let nextId = 1;
  const waiting = new Map<number, () => void>();
  let events: DeliveryEvents | undefined;

  function settleAll(): void {
    for (const done of waiting.values()) done();
    waiting.clear();
  }

  function thread(): Worker | undefined {
    if (worker !== undefined || failed) return worker;
    const started = startModuleWorker(siblingModule(import.meta.url, 'span-export-worker'), { workerData: init });
    started.unref();
    started.on('message', (message: FromExportWorker) => {
      if (message.event === 'accepted') events?.accepted(message.spans);
      else if (message.event === 'dropped') events?.dropped(message.spans);
      else if (message.event === 'result') {
        report(message.ok ? { code: core.ExportResultCode.SUCCESS } : { code: core.ExportResultCode.FAILED, error: new Error(message.reason ?? 'unknown') });
      } else {
        waiting.get(message.id)?.();
        waiting.delete(message.id);
      }
    });
    started.on('error', (error) => {
      options.log?.error({ err: error }, 'span export thread failed; spans are no longer exported');
    });
    started.on('exit', () => {
      // A thread that is gone takes no more batches; nothing waits on it.
      failed = true;
      worker = undefined;
      settleAll();
    });
    worker = started;
    return worker;
  }

  function request(kind: 'flush' | 'shutdown'): Promise<void> {
    const target = worker;
    if (target === undefined) return Promise.resolve();
    const id = nextId++;
    // While an answer is awaited the thread keeps the process alive, so a final flush is not cut short.
    target.ref();
    return new Promise<void>((resolve) => {
      waiting.set(id, () => {
        if (waiting.size <= 1) target.unref();
        resolve();
      });
      target.postMessage({ request: kind, id } satisfies ToExportWorker);
    });
  }

  return createSpanExport(
    {
      deliver(batch, spans) {
        const target = thread();
        if (target === undefined) events?.accepted(spans);
        else target.postMessage({ batch, spans } satisfies ToExportWorker);
      },
      flush: () => request('flush'),
      async shutdown() {
        const target = worker;
        await request('shutdown');
        failed = true;
        await target?.terminate();
      },
    },
    options,
    (connected) => {
      events = connected;
    },
  );
}

