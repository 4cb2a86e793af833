/**
 * The way finished spans leave the process. The main thread writes each
 * sampled span as OTLP protobuf into a chunk of bytes (span-record.ts) and
 * hands full chunks to an export thread (span-export-worker.ts) without
 * copying them: the chunk keeps room in front of its spans for the
 * request's framing (otlp-span-encoding.ts), so it leaves as a whole OTLP
 * request and its buffer is transferred. Full chunks are posted several at
 * a time (`POST_BATCH_SPANS`), and every span within `POST_DELAY_MS`, so
 * the export thread wakes seldom. The export thread sends each chunk with
 * OpenTelemetry's OTLP exporter and, once the collector has it, hands the
 * buffer back for the next spans, so the main thread seldom allocates a
 * chunk. The export thread has almost nothing to do, which matters as much
 * as the main thread's share: on a two-core machine, a busy second core
 * makes every wake-up of an executor thread slower (docs/observability.md,
 * "Export and failure").
 *
 * Memory is bounded at each step: spans held or posted and not yet taken by
 * the export thread plus spans in the open chunk stay under `maxQueuedSpans`,
 * and the export thread drops past the same bound when a collector is
 * slower than the server; drops are logged at most once a minute. At most
 * `SPARE_CHUNKS` buffers wait for reuse.
 *
 * With an exporter handed in (tests, benchmarks) the same chunks are read
 * back and handed to a processor on the main thread instead, so every span
 * still makes the round trip through its bytes.
 */
import type { Worker } from 'node:worker_threads';
import type { Attributes } from '@opentelemetry/api';
import { core, type resources, type tracing } from '@opentelemetry/sdk-node';
import type { Clock } from '../../supervisors/index.js';
import { siblingModule, startModuleWorker } from '../module-worker.js';
import type { DeferredSpan, SpanChunkSink } from './light-span.js';
import type { Logger } from './logger.js';
import type { OtlpEndpoint } from './otlp-endpoint.js';
import { createRequestFrame, type EncodingScope } from './otlp-span-encoding.js';
import { ProtoWriter } from './proto-writer.js';
import { readSpans } from './span-record-reader.js';
import { within } from './within.js';

type ReadableSpan = tracing.ReadableSpan;
type ExportResult = Parameters<Parameters<tracing.SpanExporter['export']>[1]>[0];

/**
 * Size of a chunk of encoded spans (about 3,300 message-path spans); a chunk
 * is full once it holds `POST_BYTES`.
 */
export const CHUNK_BYTES = 1024 * 1024;
export const POST_BYTES = CHUNK_BYTES - 16 * 1024;
/**
 * Full chunks wait on this thread until they hold this many spans, or
 * `POST_BATCH_CHUNKS` of them wait (large spans), and then go to the export
 * thread in one post (each still its own export request). Each post costs
 * wake-ups of the export thread beyond its bytes, and on a two-core machine
 * those slow the agents (docs/benchmarks.md). Held spans count against
 * `maxQueuedSpans` like posted ones.
 */
export const POST_BATCH_SPANS = 8_192;
export const POST_BATCH_CHUNKS = 4;
/**
 * Every span is posted at most this long after it was written; the chunk
 * that is not full goes along as a copy of its size, so a quiet server's
 * spans reach the collector within about this long.
 */
export const POST_DELAY_MS = 2_000;
/** Chunk buffers kept for reuse once the export thread hands them back: what one post takes, and the open chunk. */
export const SPARE_CHUNKS = POST_BATCH_CHUNKS + 1;
/** A dropping queue is reported at most this often. */
export const DROP_LOG_INTERVAL_MS = 60_000;

export interface ExportWorkerInit {
  endpoint: OtlpEndpoint;
  timeoutMs: number;
  headers: Record<string, string>;
  resourceAttributes: Attributes;
  scope: { name: string; version?: string };
  /** Spans the thread holds, queued and in flight; past it arriving posts are dropped. */
  maxQueuedSpans: number;
}

/**
 * Main thread to export thread: chunks of encoded spans, each a whole
 * export request (views of their buffers, which are transferred), with
 * `spans[i]` spans in `chunks[i]`; or a request answered by id.
 */
export type ToExportWorker = { chunks: Uint8Array[]; spans: number[] } | { request: 'flush' | 'shutdown'; id: number };
/** Export thread to main thread; `buffers` are chunk buffers handed back for reuse (transferred). */
export type FromExportWorker =
  | { event: 'accepted'; spans: number }
  | { event: 'dropped'; spans: number; buffers: ArrayBuffer[] }
  | { event: 'result'; ok: boolean; reason?: string; buffers: ArrayBuffer[] }
  | { event: 'done'; id: number };

/** A chunk written and not yet posted: `spans` spans from the chunk's front space up to `end`. */
interface WrittenChunk {
  bytes: Uint8Array;
  end: number;
  spans: number;
}

/** Where posted chunks go: the export thread, or a processor in this thread. */
interface Delivery {
  /**
   * Takes `chunks`, which are its own from now on: `spans` spans in all,
   * each chunk's from `start` to its `end`, with the space in front of
   * `start` free. `accepted` is called with the count once the processor
   * has them.
   */
  deliver(chunks: readonly WrittenChunk[], start: number, spans: number): void;
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

export interface SpanExport extends SpanChunkSink {
  /** Posts what is written and waits until the processor has exported it. Never rejects. */
  flush(): Promise<void>;
  /** Flushes, then stops; spans ended afterwards are dropped. Idempotent; never rejects. */
  shutdown(): Promise<void>;
  /** Spans dropped because the queue was full, since start. */
  dropped(): number;
  /** Chunk buffers allocated since start; while exports succeed, buffers come back and this stays at a few. */
  chunksAllocated(): number;
}

export interface SpanExportOptions {
  maxQueuedSpans: number;
  clock: Clock;
  log?: Logger;
}

/** What a delivery reports back: spans the processor took, spans it dropped, and a chunk buffer it is done with. */
interface DeliveryEvents {
  accepted(spans: number): void;
  dropped(spans: number): void;
  reuse(buffer: ArrayBuffer): void;
}

/**
 * The queue in front of a delivery; `deliveryFor` makes the delivery, given
 * where it reports back. Each chunk keeps `frontBytes` free in front of its spans.
 */
function createSpanExport(options: SpanExportOptions, deliveryFor: (events: DeliveryEvents) => Delivery, frontBytes = 0): SpanExport {
  const spare: ArrayBuffer[] = [];
  let allocated = 0;

  function newChunk(): ProtoWriter {
    const buffer = spare.pop();
    if (buffer === undefined) allocated += 1;
    const writer = buffer === undefined ? new ProtoWriter(CHUNK_BYTES) : ProtoWriter.over(new Uint8Array(buffer));
    writer.pos = frontBytes;
    return writer;
  }

  let chunk = newChunk();
  /** Spans in the open chunk. */
  let written = 0;
  /** Full chunks waiting for the next post. */
  let held: WrittenChunk[] = [];
  let heldSpans = 0;
  /** Spans held or posted and not yet taken by the processor. */
  let posted = 0;
  let dropped = 0;
  let unreportedDrops = 0;
  let lastDropLine = -Infinity;
  let timer: NodeJS.Timeout | undefined;
  let stopped: Promise<void> | undefined;
  // Two lists that take turns, so a busy server does not grow a new one every turn of the event loop.
  let deferred: DeferredSpan[] = [];
  let deferredSpare: DeferredSpan[] = [];
  /** Whether a microtask will write the deferred spans. */
  let writeQueued = false;

  const delivery = deliveryFor({
    accepted(spans) {
      posted -= spans;
    },
    dropped: (spans) => drop(spans),
    reuse(buffer) {
      if (buffer.byteLength === CHUNK_BYTES && spare.length < SPARE_CHUNKS) spare.push(buffer);
    },
  });

  /** Moves the open chunk's spans to the held ones: the chunk itself when it is full, else a copy of its size (the buffer is kept for the next spans). */
  function hold(): void {
    if (written === 0) return;
    const end = chunk.pos;
    if (end >= POST_BYTES) {
      held.push({ bytes: chunk.bytes, end, spans: written });
      chunk = newChunk();
    } else {
      held.push({ bytes: chunk.finish(), end, spans: written });
      chunk.pos = frontBytes;
    }
    heldSpans += written;
    posted += written;
    written = 0;
  }

  /** Posts every span written: the held chunks and the open one's spans. */
  function post(): void {
    if (timer !== undefined) {
      clearTimeout(timer);
      timer = undefined;
    }
    hold();
    if (heldSpans === 0) return;
    const chunks = held;
    const spans = heldSpans;
    held = [];
    heldSpans = 0;
    delivery.deliver(chunks, frontBytes, spans);
  }

  function drop(spans = 1): undefined {
    dropped += spans;
    unreportedDrops += spans;
    const now = options.clock.now();
    if (now - lastDropLine >= DROP_LOG_INTERVAL_MS) {
      lastDropLine = now;
      options.log?.warn({ dropped_spans: unreportedDrops, queued_spans: posted + written }, 'span export queue full; spans dropped');
      unreportedDrops = 0;
    }
    return undefined;
  }

  function open(): ProtoWriter | undefined {
    if (stopped !== undefined || posted + written >= options.maxQueuedSpans) return drop();
    return chunk;
  }

  function commit(): void {
    written += 1;
    timer ??= setTimeout(post, POST_DELAY_MS).unref();
    if (chunk.pos < POST_BYTES) return;
    hold();
    if (heldSpans >= POST_BATCH_SPANS || held.length >= POST_BATCH_CHUNKS) post();
  }

  function writeDeferred(): void {
    writeQueued = false;
    const spans = deferred;
    deferred = deferredSpare;
    deferredSpare = spans;
    try {
      for (const span of spans) {
        const into = open();
        if (into === undefined) continue;
        span.writeTo(into);
        commit();
      }
    } finally {
      spans.length = 0;
    }
  }

  return {
    open,
    commit,
    defer(span) {
      deferred.push(span);
      if (writeQueued) return;
      writeQueued = true;
      queueMicrotask(writeDeferred);
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
    chunksAllocated: () => allocated,
  };
}

/** Spans exported by `processor` on this thread (an exporter handed in by a test or benchmark). */
export function createInThreadSpanExport(
  processor: tracing.SpanProcessor,
  resource: resources.Resource,
  scope: ReadableSpan['instrumentationScope'],
  options: SpanExportOptions,
): SpanExport {
  return createSpanExport(options, (events) => ({
    deliver(chunks, start, spans) {
      for (const { bytes, end } of chunks) {
        for (const span of readSpans(bytes.subarray(start, end), resource, scope)) processor.onEnd(span);
        events.reuse(bytes.buffer as ArrayBuffer);
      }
      events.accepted(spans);
    },
    flush: () => processor.forceFlush(),
    shutdown: () => processor.shutdown(),
  }));
}

/**
 * Spans exported from the export thread. The thread starts at once: it
 * takes a few hundred milliseconds to load, and a server under load from
 * its first second would fill the queue before it is up. `report`
 * gets the result of every export request (otlp-exporter.ts logs failures).
 */
export function createThreadSpanExport(init: ExportWorkerInit, report: (result: ExportResult) => void, options: SpanExportOptions): SpanExport {
  const frame = createRequestFrame(init satisfies EncodingScope);
  return createSpanExport(options, (events) => {
    let worker: Worker | undefined;
    let failed = false;
    /** Whether the thread was ever given spans: until then a flush or a stop has nothing to wait for, not even its start. */
    let delivered = false;
    let nextId = 1;
    const waiting = new Map<number, () => void>();

    function settleAll(): void {
      for (const done of waiting.values()) done();
      waiting.clear();
    }

    function thread(): Worker | undefined {
      if (worker !== undefined || failed) return worker;
      const started = startModuleWorker(siblingModule(import.meta.url, 'span-export-worker'), { workerData: init });
      started.unref();
      started.on('message', (message: FromExportWorker) => {
        if (message.event === 'accepted') events.accepted(message.spans);
        else if (message.event === 'dropped') {
          events.dropped(message.spans);
          for (const buffer of message.buffers) events.reuse(buffer);
        } else if (message.event === 'result') {
          for (const buffer of message.buffers) events.reuse(buffer);
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
        // A thread that is gone takes no more chunks; nothing waits on it.
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

    thread();
    return {
      deliver(chunks, start, spans) {
        const target = thread();
        if (target !== undefined) {
          const requests = chunks.map(({ bytes, end }) => bytes.subarray(frame.write(bytes, start, end), end));
          const counts = chunks.map((chunk) => chunk.spans);
          target.postMessage({ chunks: requests, spans: counts } satisfies ToExportWorker, requests.map((request) => request.buffer as ArrayBuffer));
          delivered = true;
          return;
        }
        // No thread to take them (it failed, or the export was shut down): the spans are dropped, and counted.
        events.accepted(spans);
        events.dropped(spans);
      },
      flush: () => (delivered ? request('flush') : Promise.resolve()),
      async shutdown() {
        const target = worker;
        // A collector that does not answer holds the last requests for up to `otlp_timeout` each;
        // the stop as a whole waits that long once, then the thread and what it still holds go.
        if (delivered && !(await within(init.timeoutMs, request('shutdown')))) {
          options.log?.warn({ otlp_timeout_ms: init.timeoutMs }, 'trace export cut short at stop; the spans still queued are dropped');
        }
        failed = true;
        await target?.terminate();
      },
    };
  }, frame.maxBytes);
}
