/**
 * The server's tracer, built from the `observability` section.
 *
 * Spans are created explicitly by our own middleware, interceptors and
 * runtime (names in span-names.ts), not by OpenTelemetry's auto
 * instrumentations: those patch `http`, `@grpc/grpc-js` and `koa` while they
 * load, which in this ESM project works only with a loader hook preloaded by
 * `node --import` before the first import (the `svc` bin runs without one),
 * and they would add spans named `GET` or `grpc.svc.v1...` beside ours,
 * doubling the span volume the benchmark budget allows. See
 * docs/observability.md.
 *
 * Tracing off (`enable_tracing` false or no `otlp_endpoint`) still runs the
 * same tracer with a never-sampling sampler: every span is a cheap
 * non-recording span that has ids, so `trace_id` in error bodies and log
 * lines, `X-Trace-Id` and onward `traceparent` work the same either way.
 *
 * The SDK's tracer makes the API calls' spans; the message path makes light
 * spans (light-span.ts, `startLightSpan`). Both end up in one export queue
 * and leave from the export thread (span-export.ts).
 *
 * The provider is not registered as OpenTelemetry's global: the `Tracing`
 * object is handed to the code that makes spans, so several servers (tests)
 * can live in one process. Only the async context manager is global, since
 * `context.active()` has to follow every async chain of the process.
 */
import { context, SpanKind, SpanStatusCode, trace, TraceFlags, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { resources, tracing } from '@opentelemetry/sdk-node';
import { createRealClock, type Clock } from '../../supervisors/index.js';
import type { Config } from '../config/schema.js';
import { SvcError } from '../errors/svc-error.js';
import { installContextManager } from './context-manager.js';
import type { Logger } from './logger.js';
import { parseOtlpEndpoint } from './otlp-endpoint.js';
import { LightSpan, type AttributeList, type ParentSpan } from './light-span.js';
import { createExportReporter, endpointForLog, type SpanExporter } from './otlp-exporter.js';
import { createInThreadSpanExport, createThreadSpanExport, type SpanExport } from './span-export.js';
import { serviceResource } from './service-resource.js';
import { SPAN_ATTRIBUTES } from './span-names.js';
import { writeReadableSpan } from './span-record.js';
import {
  currentSpanId,
  currentTraceId,
  extractGrpcMetadata,
  extractHttpHeaders,
  extractMessageMetadata,
  injectGrpcMetadata,
  injectHttpHeaders,
  injectMessageMetadata,
  requestedTraceId,
} from './trace-context.js';
import { newSpanId, newTraceId } from './trace-ids.js';

/**
 * Spans waiting for export on each side of the export thread, those held for the next post
 * included; past it new spans are dropped, so a stalled collector bounds memory (message-path
 * spans are about 300 bytes: some 10 MB a side). At 100k spans a second it covers four posts of
 * 8,192 spans, or 320 ms the low-priority export thread may wait for a core.
 */
export const MAX_QUEUED_SPANS = 32_768;
/**
 * The batch processor's settings for an exporter handed in (tests, benchmarks): spans that make
 * an export go at once, and the longest wait between exports. Spans for the OTLP endpoint are
 * gathered by span-export.ts instead.
 */
export const EXPORT_BATCH_SPANS = 1024;
export const EXPORT_DELAY_MS = 2_000;
/** The instrumentation scope name of every span. */
export const TRACER_NAME = 'svc';

export type TracingConfig = Pick<
  Config['observability'],
  'enable_tracing' | 'otlp_endpoint' | 'otlp_timeout' | 'otlp_headers' | 'trace_sample_rate' | 'service_name' | 'service_version' | 'deployment_environment'
>;

export interface TracingOptions {
  /** `service.version` when `service_version` is empty: the package version. */
  serviceVersion: string;
  /** Export failures are reported here, at most once a minute. */
  log?: Logger;
  clock?: Clock;
  /** Replaces the OTLP exporter (tests, benchmarks) when `enable_tracing` is on; no endpoint is needed then. */
  exporter?: SpanExporter;
}

export interface SpanOptions {
  kind?: SpanKind;
  /** The parent; default the active context. Pass an extracted context at a door or for a delivered message. */
  parent?: Context;
}

/** W3C Trace Context helpers (trace-context.ts), also reachable from the `Tracing` object. */
export const propagation = {
  injectHttpHeaders,
  extractHttpHeaders,
  injectGrpcMetadata,
  extractGrpcMetadata,
  injectMessageMetadata,
  extractMessageMetadata,
} as const;

export interface Tracing {
  /** True when sampled spans leave the process. */
  readonly exporting: boolean;
  readonly tracer: Tracer;
  readonly propagation: typeof propagation;
  /**
   * Runs `fn` inside a new span that is active for everything `fn` starts,
   * synchronously or after an `await`. The span ends when `fn` returns or,
   * when it returns a promise, when that settles; a throw or rejection is
   * recorded on the span (exception event, status ERROR, `svc.error.code`)
   * and passed on unchanged.
   */
  withSpan<T>(name: string, attributes: Attributes, fn: (span: Span) => T, options?: SpanOptions): T;
  /**
   * A span of the message path under `parent`, made without the SDK's span
   * machinery (light-span.ts): undefined unless spans are exported and
   * `parent` is sampled. Its end is the caller's. `startTime` (milliseconds
   * since the epoch) is a time already read, for a span that starts when
   * another ended; default now.
   */
  startLightSpan(name: string, kind: SpanKind, parent: ParentSpan, attributes: Attributes | AttributeList, startTime?: number): LightSpan | undefined;
  /** A span whose end the caller owns (streams, work handed to another component). */
  startSpan(name: string, attributes?: Attributes, options?: SpanOptions): Span;
  /** Marks `span` failed with `error`, as `withSpan` does. */
  recordError(span: Span, error: unknown): void;
  currentTraceId(ctx?: Context): string | undefined;
  currentSpanId(ctx?: Context): string | undefined;
  /** Sampled spans dropped since start because the export queue was full (a collector slower than the server). */
  droppedSpans(): number;
  /** Exports what is queued now (tests, graceful stop). Never rejects: failures are logged. */
  flush(): Promise<void>;
  /** Flushes, then stops exporting; spans made afterwards are dropped. Idempotent; never rejects. */
  shutdown(): Promise<void>;
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

/** Where sampled spans go, or undefined when they go nowhere (tracing off, or no endpoint). */
function spanExportFor(config: TracingConfig, options: TracingOptions, clock: Clock, resource: resources.Resource, scope: { name: string; version: string }): SpanExport | undefined {
  if (!config.enable_tracing) return undefined;
  const queue = { maxQueuedSpans: MAX_QUEUED_SPANS, clock, log: options.log };
  if (options.exporter !== undefined) {
    const processor = new tracing.BatchSpanProcessor(options.exporter, {
      maxQueueSize: MAX_QUEUED_SPANS,
      maxExportBatchSize: EXPORT_BATCH_SPANS,
      scheduledDelayMillis: EXPORT_DELAY_MS,
      exportTimeoutMillis: config.otlp_timeout,
    });
    return createInThreadSpanExport(processor, resource, scope, queue);
  }
  const endpoint = parseOtlpEndpoint(config.otlp_endpoint);
  if (endpoint === undefined) return undefined;
  const report = createExportReporter({ log: options.log, clock, endpoint: endpointForLog(endpoint) });
  const init = {
    endpoint,
    timeoutMs: config.otlp_timeout,
    headers: { ...config.otlp_headers },
    resourceAttributes: resource.attributes,
    scope,
    maxQueuedSpans: MAX_QUEUED_SPANS,
  };
  return createThreadSpanExport(init, report, queue);
}

/** Hands each sampled span the SDK finishes (the API calls' spans) to the export queue. */
function recordingProcessor(queue: SpanExport): tracing.SpanProcessor {
  return {
    onStart: () => undefined,
    onEnd(span) {
      if ((span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return;
      const chunk = queue.open();
      if (chunk === undefined) return;
      writeReadableSpan(chunk, span);
      queue.commit();
    },
    forceFlush: () => queue.flush(),
    shutdown: () => queue.shutdown(),
  };
}

export function createTracing(config: TracingConfig, options: TracingOptions): Tracing {
  installContextManager();
  const clock = options.clock ?? createRealClock();
  const version = config.service_version || options.serviceVersion;
  const resource = serviceResource(config, options.serviceVersion);
  const queue = spanExportFor(config, options, clock, resource, { name: TRACER_NAME, version });

  // The tracer asks for a trace id only for a root span; `startSpan` puts the
  // id a client requested (`x-trace-id`) here just before, synchronously.
  let pendingTraceId: string | undefined;
  const idGenerator = {
    generateTraceId: () => pendingTraceId ?? newTraceId(),
    generateSpanId: newSpanId,
  };

  const provider = new tracing.BasicTracerProvider({
    resource,
    idGenerator,
    sampler:
      queue === undefined
        ? new tracing.AlwaysOffSampler()
        : new tracing.ParentBasedSampler({ root: new tracing.TraceIdRatioBasedSampler(config.trace_sample_rate) }),
    spanProcessors: queue === undefined ? [] : [recordingProcessor(queue)],
  });
  const tracer = provider.getTracer(TRACER_NAME, version);
  let stopped: Promise<void> | undefined;

  function startSpan(name: string, attributes: Attributes = {}, spanOptions: SpanOptions = {}): Span {
    const parent = spanOptions.parent ?? context.active();
    pendingTraceId = trace.getSpan(parent) === undefined ? requestedTraceId(parent) : undefined;
    try {
      return tracer.startSpan(name, { kind: spanOptions.kind ?? SpanKind.INTERNAL, attributes }, parent);
    } finally {
      pendingTraceId = undefined;
    }
  }

  function recordError(span: Span, error: unknown): void {
    if (!span.isRecording()) return;
    span.recordException(error instanceof Error ? error : String(error));
    span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
    if (error instanceof SvcError) span.setAttribute(SPAN_ATTRIBUTES.errorCode, error.code);
  }

  function withSpan<T>(name: string, attributes: Attributes, fn: (span: Span) => T, spanOptions: SpanOptions = {}): T {
    const parent = spanOptions.parent ?? context.active();
    const span = startSpan(name, attributes, { ...spanOptions, parent });
    let result: T;
    try {
      result = context.with(trace.setSpan(parent, span), fn, undefined, span);
    } catch (error) {
      recordError(span, error);
      span.end();
      throw error;
    }
    if (!isPromiseLike(result)) {
      span.end();
      return result;
    }
    return result.then(
      (value) => {
        span.end();
        return value;
      },
      (error: unknown) => {
        recordError(span, error);
        span.end();
        throw error;
      },
    ) as T;
  }

  function startLightSpan(name: string, kind: SpanKind, parent: ParentSpan, attributes: Attributes | AttributeList, startTime?: number): LightSpan | undefined {
    if (queue === undefined || (parent.traceFlags & TraceFlags.SAMPLED) === 0) return undefined;
    return new LightSpan(queue, name, kind, parent, attributes, startTime);
  }

  return {
    exporting: queue !== undefined,
    tracer,
    startLightSpan,
    propagation,
    withSpan,
    startSpan,
    recordError,
    currentTraceId,
    currentSpanId,
    // A failed export rejects the processor's flush; the exporter wrapper has logged it, and
    // neither a test's flush nor the server's stop should fail because a collector is down.
    droppedSpans: () => queue?.dropped() ?? 0,
    flush: () => stopped ?? queue?.flush() ?? Promise.resolve(),
    shutdown() {
      stopped ??= provider.shutdown().catch(() => undefined);
      return stopped;
    },
  };
}
