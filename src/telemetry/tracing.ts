/**
 * The server's tracer, built from the `observability` section on the
 * OpenTelemetry SDK: a `BasicTracerProvider` whose sampler is
 * trace-sampler.ts and whose sampled spans go through span-export.ts to the
 * OTLP exporter of `otlp_endpoint`. Span names and attributes are ours
 * (span-names.ts); the doors' middleware and interceptors, the agent
 * runtime and message-trace.ts make the spans explicitly.
 *
 * Tracing off (`enable_tracing` false or no `otlp_endpoint`) still runs the
 * same tracer with a never-sampling sampler: every span is a cheap
 * non-recording span that has ids, so `trace_id` in error bodies and log
 * lines, `X-Trace-Id` and onward `traceparent` work the same either way.
 *
 * The provider is not registered as OpenTelemetry's global: the `Tracing`
 * object is handed to the code that makes spans, so several servers can live
 * in one process and share nothing. Only the async context manager is
 * global, since `context.active()` has to follow every async chain of the
 * process.
 */
import { context, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type TimeInput, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { AlwaysOffSampler, BasicTracerProvider, RandomIdGenerator, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { createRealClock, type Clock } from '../../supervisors/index.js';
import type { Config } from '../config/schema.js';
import { SvcError } from '../errors/svc-error.js';
import { createExportReporter, TRACE_EXPORT_MESSAGES } from './export-reporter.js';
import type { Logger } from './logger.js';
import { parseOtlpEndpoint } from './otlp-endpoint.js';
import { createOtlpTraceExporter, endpointForLog } from './otlp-exporter.js';
import { serviceResource } from './service-resource.js';
import { createSpanExport, type SpanExport } from './span-export.js';
import { SPAN_ATTRIBUTES } from './span-names.js';
import { propagation, requestedTraceId, currentSpanId, currentTraceId } from './trace-context.js';
import { createTraceSampler } from './trace-sampler.js';
import { within } from './within.js';

/** The instrumentation scope name of every span. */
export const TRACER_NAME = 'svc';
export const EXPORT_CUT_SHORT_MESSAGE = 'trace export cut short at stop; the spans still queued are dropped';

export type TracingConfig = Pick<
  Config['observability'],
  | 'enable_tracing'
  | 'otlp_endpoint'
  | 'otlp_timeout'
  | 'otlp_headers'
  | 'trace_sample_rate'
  | 'message_trace_sample_rate'
  | 'service_name'
  | 'service_version'
  | 'deployment_environment'
>;

export interface TracingOptions {
  /** `service.version` when `service_version` is empty: the package version. */
  serviceVersion: string;
  /** Export failures and drops are reported here, at most once a minute. */
  log?: Logger;
  /** Paces those reports and bounds the final flush. */
  clock?: Clock;
  /** Replaces the OTLP exporter (tests, benchmarks) when `enable_tracing` is on; no endpoint is needed then. */
  exporter?: SpanExporter;
}

export interface SpanOptions {
  kind?: SpanKind;
  /** The parent; default the active context. Pass an extracted context at a door or for a delivered message. */
  parent?: Context;
  /** Default now; a time already read, for a span that starts when another ended. */
  startTime?: TimeInput;
}

export interface Tracing {
  /** True when sampled spans leave the process. */
  readonly exporting: boolean;
  readonly tracer: Tracer;
  /** W3C Trace Context for HTTP headers, gRPC metadata and message metadata (trace-context.ts). */
  readonly propagation: typeof propagation;
  /**
   * Runs `fn` inside a new span that is active for everything `fn` starts,
   * synchronously or after an `await`. The span ends when `fn` returns or,
   * when it returns a promise, when that settles; a throw or rejection is
   * recorded on the span (exception event, status ERROR, `svc.error.code`)
   * and passed on unchanged.
   */
  withSpan<T>(name: string, attributes: Attributes, fn: (span: Span) => T, options?: SpanOptions): T;
  /** A span whose end the caller owns (streams, work handed to another component). */
  startSpan(name: string, attributes?: Attributes, options?: SpanOptions): Span;
  /** Marks `span` failed with `error`, as `withSpan` does. */
  recordError(span: Span, error: unknown): void;
  currentTraceId(ctx?: Context): string | undefined;
  currentSpanId(ctx?: Context): string | undefined;
  /** Sampled spans dropped since start because the export queue was full (a collector slower than the server). */
  droppedSpans(): number;
  /** Exports what has ended so far. Never rejects: failures are logged. */
  flush(): Promise<void>;
  /** Flushes within `otlp_timeout`, then stops exporting. Idempotent; never rejects. */
  shutdown(): Promise<void>;
}

let contextManagerInstalled = false;

/** Makes `context.active()` follow async chains; the context API is the process's, so this happens once. */
function installContextManager(): void {
  if (contextManagerInstalled) return;
  contextManagerInstalled = true;
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

/** Where sampled spans go, or undefined when they go nowhere (tracing off, or no endpoint). */
function spanExportFor(config: TracingConfig, options: TracingOptions, clock: Clock): SpanExport | undefined {
  if (!config.enable_tracing) return undefined;
  const common = { timeoutMs: config.otlp_timeout, clock, log: options.log };
  if (options.exporter !== undefined) return createSpanExport(options.exporter, common);
  const endpoint = parseOtlpEndpoint(config.otlp_endpoint);
  if (endpoint === undefined) return undefined;
  const exporter = createOtlpTraceExporter(endpoint, { timeoutMs: config.otlp_timeout, headers: config.otlp_headers });
  const report = createExportReporter({ log: options.log, clock, endpoint: endpointForLog(endpoint), messages: TRACE_EXPORT_MESSAGES });
  return createSpanExport(exporter, { ...common, report });
}

export function createTracing(config: TracingConfig, options: TracingOptions): Tracing {
  installContextManager();
  const clock = options.clock ?? createRealClock();
  const spanExport = spanExportFor(config, options, clock);

  // The tracer asks for a trace id only for a root span; `startSpan` puts the
  // id a client requested (`x-trace-id`) here just before, synchronously.
  let pendingTraceId: string | undefined;
  const ids = new RandomIdGenerator();
  const provider = new BasicTracerProvider({
    resource: serviceResource(config, options.serviceVersion),
    idGenerator: {
      generateTraceId: () => pendingTraceId ?? ids.generateTraceId(),
      generateSpanId: () => ids.generateSpanId(),
    },
    sampler: spanExport === undefined ? new AlwaysOffSampler() : createTraceSampler(config),
    spanProcessors: spanExport === undefined ? [] : [spanExport],
  });
  const tracer = provider.getTracer(TRACER_NAME, config.service_version || options.serviceVersion);
  let stopped: Promise<void> | undefined;

  function startSpan(name: string, attributes: Attributes = {}, spanOptions: SpanOptions = {}): Span {
    const parent = spanOptions.parent ?? context.active();
    pendingTraceId = trace.getSpan(parent) === undefined ? requestedTraceId(parent) : undefined;
    try {
      return tracer.startSpan(name, { kind: spanOptions.kind ?? SpanKind.INTERNAL, attributes, startTime: spanOptions.startTime }, parent);
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

  async function shutdown(): Promise<void> {
    // A collector that does not answer holds the last requests; the stop waits for it `otlp_timeout` once.
    const done = await within(clock, config.otlp_timeout, provider.shutdown().catch(() => undefined));
    if (!done && spanExport !== undefined) options.log?.warn({ otlp_timeout_ms: config.otlp_timeout }, EXPORT_CUT_SHORT_MESSAGE);
  }

  return {
    exporting: spanExport !== undefined,
    tracer,
    propagation,
    withSpan,
    startSpan,
    recordError,
    currentTraceId,
    currentSpanId,
    droppedSpans: () => spanExport?.dropped() ?? 0,
    // A failed export rejects the processor's flush; the reporter has logged it, and neither a
    // test's flush nor the server's stop should fail because a collector is down.
    flush: () => stopped ?? provider.forceFlush({ timeoutMillis: config.otlp_timeout }).catch(() => undefined),
    shutdown() {
      stopped ??= shutdown();
      return stopped;
    },
  };
}
