/**
 * The trace id of a call: the client's `X-Trace-Id` when it is a W3C trace id
 * (32 hex digits, not all zero), else the trace id of its `traceparent`, else
 * a new random one. It goes into the CallContext, the `X-Trace-Id` response
 * header and every error body, so one id ties a client's report to the logs.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

export const TRACE_ID_HEADER = 'x-trace-id';

const TRACE_ID = /^[0-9a-f]{32}$/;
const ZERO = '0'.repeat(32);
// version-traceid-parentid-flags (W3C Trace Context, version 00 layout).
const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}/;

export function isTraceId(value: string): boolean {
  return TRACE_ID.test(value) && value !== ZERO;
}

// Random bytes fetched 16 at a time cost a syscall each; a pooled block serves 256 ids per fetch.
const POOL_IDS = 256;
let pool = Buffer.alloc(0);
let offset = 0;

export function newTraceId(): string {
  if (offset >= pool.length) {
    pool = randomBytes(16 * POOL_IDS);
    offset = 0;
  }
  const id = pool.toString('hex', offset, offset + 16);
  offset += 16;
  return id === ZERO ? newTraceId() : id;
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** The trace id a request carries, lower-cased, or a new one. */
export function traceIdFrom(headers: IncomingHttpHeaders): string {
  const given = single(headers[TRACE_ID_HEADER])?.trim().toLowerCase();
  if (given !== undefined && isTraceId(given)) return given;
  const parent = TRACEPARENT.exec(single(headers.traceparent)?.trim().toLowerCase() ?? '')?.[1];
  if (parent !== undefined && parent !== ZERO) return parent;
  return newTraceId();
}
