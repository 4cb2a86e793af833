/**
 * W3C Trace Context across the three hops a trace crosses in svc: HTTP
 * headers, gRPC metadata and the `metadata` map of a FIPA message
 * (`traceparent`, `tracestate`). A client's request, the message it sends,
 * the agent that handles it and the message that agent sends on form one
 * trace because each hop injects the active context and the next extracts it.
 *
 * The doors also honour `X-Trace-Id` (HTTP header or gRPC metadata
 * `x-trace-id`): when it is a W3C trace id it wins over `traceparent`, as the
 * doors' existing rule says; the call's root span then gets exactly that
 * trace id (see `requestedTraceId`), so the id a client chose is the id in
 * the response, the error body, the log lines and the trace backend. Any
 * other value (a UUID, a request id) is still echoed as sent wherever an
 * answer names its trace (see `echoedTraceId`), while the call's spans get
 * a new trace id, which the log lines name.
 *
 * One W3C propagator carries the context over all three, through a getter
 * and a setter per carrier. These functions need no tracer: they work
 * whether tracing is on or off.
 */
import {
  context,
  createContextKey,
  ROOT_CONTEXT,
  trace,
  type Context,
  type TextMapGetter,
  type TextMapSetter,
} from '@opentelemetry/api';
import type { Metadata } from '@grpc/grpc-js';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { newTraceId, normalizeTraceId } from './trace-ids.js';

export const TRACEPARENT = 'traceparent';
export const TRACESTATE = 'tracestate';
/** HTTP header and gRPC metadata key a client sets to choose the trace id of its call. */
export const TRACE_ID_HEADER = 'x-trace-id';

/** The one propagator of every carrier; it keeps no state. */
const W3C = new W3CTraceContextPropagator();
const REQUESTED_TRACE_ID = createContextKey('svc.requested_trace_id');
const ECHOED_TRACE_ID = createContextKey('svc.echoed_trace_id');
/** What an `x-trace-id` may be to be echoed: visible ASCII, as long as a request id reasonably is. */
const ECHOABLE_TRACE_ID = /^[\x21-\x7e]{1,128}$/;

/** Node's incoming and outgoing header objects both fit this shape. */
export type HeaderCarrier = Record<string, string | string[] | number | undefined>;
/** A message's `metadata` map. */
export type MessageMetadata = Record<string, string>;

const headerGetter: TextMapGetter<HeaderCarrier> = {
  keys: (carrier) => Object.keys(carrier),
  get(carrier, key) {
    // Node lower-cases incoming header names; outgoing objects built by hand may not be.
    const value = carrier[key] ?? carrier[key.toLowerCase()];
    return typeof value === 'number' ? String(value) : value;
  },
};
const headerSetter: TextMapSetter<HeaderCarrier> = {
  set: (carrier, key, value) => {
    carrier[key] = value;
  },
};

const metadataGetter: TextMapGetter<Metadata> = {
  keys: (carrier) => Object.keys(carrier.getMap()),
  get(carrier, key) {
    const values = carrier.get(key).filter((v): v is string => typeof v === 'string');
    return values.length === 0 ? undefined : values;
  },
};
const metadataSetter: TextMapSetter<Metadata> = {
  set: (carrier, key, value) => carrier.set(key, value),
};

const messageGetter: TextMapGetter<MessageMetadata> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => (Object.hasOwn(carrier, key) ? carrier[key] : undefined),
};
const messageSetter: TextMapSetter<MessageMetadata> = {
  set: (carrier, key, value) => {
    carrier[key] = value;
  },
};

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** `traceparent`/`tracestate` from `carrier`, and, for the doors, `x-trace-id` over them. */
function extractFrom<C>(carrier: C, getter: TextMapGetter<C>, base: Context, honourTraceIdHeader: boolean): Context {
  const extracted = W3C.extract(base, carrier, getter);
  if (!honourTraceIdHeader) return extracted;
  const given = first(getter.get(carrier, TRACE_ID_HEADER))?.trim();
  if (given === undefined || !ECHOABLE_TRACE_ID.test(given)) return extracted;
  const echoing = extracted.setValue(ECHOED_TRACE_ID, given);
  const requested = normalizeTraceId(given);
  if (requested === undefined || trace.getSpanContext(extracted)?.traceId === requested) return echoing;
  // A traceparent of another trace is dropped: the client's explicit choice of trace id wins.
  return trace.deleteSpan(echoing).setValue(REQUESTED_TRACE_ID, requested);
}

/** Adds `traceparent` (and `tracestate`) of `ctx` to outgoing HTTP headers. */
export function injectHttpHeaders(headers: HeaderCarrier, ctx: Context = context.active()): void {
  W3C.inject(ctx, headers, headerSetter);
}

/** The parent context of an incoming HTTP request; starts from the root, never from whatever is active. */
export function extractHttpHeaders(headers: HeaderCarrier, base: Context = ROOT_CONTEXT): Context {
  return extractFrom(headers, headerGetter, base, true);
}

/** Adds `traceparent` (and `tracestate`) of `ctx` to outgoing gRPC metadata. */
export function injectGrpcMetadata(metadata: Metadata, ctx: Context = context.active()): void {
  W3C.inject(ctx, metadata, metadataSetter);
}

/** The parent context of an incoming gRPC call. */
export function extractGrpcMetadata(metadata: Metadata, base: Context = ROOT_CONTEXT): Context {
  return extractFrom(metadata, metadataGetter, base, true);
}

/** Writes `traceparent` (and `tracestate`) of `ctx` into a message's metadata, replacing any it had. */
export function injectMessageMetadata(metadata: MessageMetadata, ctx: Context = context.active()): void {
  W3C.inject(ctx, metadata, messageSetter);
}

/** The context a message was sent in, so handling it continues the sender's trace. */
export function extractMessageMetadata(metadata: MessageMetadata, base: Context = ROOT_CONTEXT): Context {
  return extractFrom(metadata, messageGetter, base, false);
}

/** The trace id a client asked for with `x-trace-id`, when no span of that trace exists yet in `ctx`. */
export function requestedTraceId(ctx: Context): string | undefined {
  const value = ctx.getValue(REQUESTED_TRACE_ID);
  return typeof value === 'string' ? value : undefined;
}

/** A client's `x-trace-id` exactly as it sent it, for the answers to its call to echo; undefined when it sent none. */
export function echoedTraceId(ctx: Context): string | undefined {
  const value = ctx.getValue(ECHOED_TRACE_ID);
  return typeof value === 'string' ? value : undefined;
}

/** The trace id of the active span (or the one a client asked for); undefined outside any trace. */
export function currentTraceId(ctx: Context = context.active()): string | undefined {
  const span = trace.getSpanContext(ctx);
  if (span !== undefined && trace.isSpanContextValid(span)) return span.traceId;
  return requestedTraceId(ctx);
}

export function currentSpanId(ctx: Context = context.active()): string | undefined {
  const span = trace.getSpanContext(ctx);
  return span !== undefined && trace.isSpanContextValid(span) ? span.spanId : undefined;
}

/** For error bodies and health answers, which always name a trace: the current one, else a fresh id. */
export function traceIdOrNew(ctx: Context = context.active()): string {
  return currentTraceId(ctx) ?? newTraceId();
}

/** The helpers above, also reachable from the `Tracing` object. */
export const propagation = {
  injectHttpHeaders,
  extractHttpHeaders,
  injectGrpcMetadata,
  extractGrpcMetadata,
  injectMessageMetadata,
  extractMessageMetadata,
} as const;
