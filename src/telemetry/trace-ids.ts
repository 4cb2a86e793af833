/**
 * W3C Trace Context ids (https://www.w3.org/TR/trace-context/#trace-id):
 * a trace id is 16 bytes and a span id 8 bytes, written as lowercase hex,
 * never all zeros. These are the ids of every span the tracer starts, so a
 * `trace_id` exists for error bodies and log lines whether tracing is on or off.
 */
import { randomBytes } from 'node:crypto';

const TRACE_ID = /^[0-9a-f]{32}$/;
const SPAN_ID = /^[0-9a-f]{16}$/;
const ZERO_TRACE_ID = '0'.repeat(32);
const ZERO_SPAN_ID = '0'.repeat(16);

/** One `randomBytes` call per id is a syscall per span; one pooled block serves this many bytes of ids. */
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let offset = 0;

function randomHex(bytes: number): string {
  if (offset + bytes > pool.length) {
    pool = randomBytes(POOL_BYTES);
    offset = 0;
  }
  const hex = pool.toString('hex', offset, offset + bytes);
  offset += bytes;
  return hex;
}

export function isTraceId(value: string): boolean {
  return TRACE_ID.test(value) && value !== ZERO_TRACE_ID;
}

export function isSpanId(value: string): boolean {
  return SPAN_ID.test(value) && value !== ZERO_SPAN_ID;
}

/** A client-given trace id (`X-Trace-Id`), trimmed and lower-cased, or undefined when it is not a W3C trace id. */
export function normalizeTraceId(value: string | undefined): string | undefined {
  const id = value?.trim().toLowerCase();
  return id !== undefined && isTraceId(id) ? id : undefined;
}

export function newTraceId(): string {
  const id = randomHex(16);
  return id === ZERO_TRACE_ID ? newTraceId() : id;
}

export function newSpanId(): string {
  const id = randomHex(8);
  return id === ZERO_SPAN_ID ? newSpanId() : id;
}
