/**
 * W3C Trace Context ids (https://www.w3.org/TR/trace-context/#trace-id):
 * a trace id is 16 bytes and a span id 8 bytes, written as lowercase hex,
 * never all zeros (the API's `INVALID_TRACEID` and `INVALID_SPANID`). The
 * tracer draws its own ids (tracing.ts); these are for the answers and
 * contexts the doors make outside any span.
 */
import { randomBytes } from 'node:crypto';
import { INVALID_SPANID, INVALID_TRACEID, isValidSpanId, isValidTraceId } from '@opentelemetry/api';

/** The API accepts upper-case hex; W3C ids, as the server writes and compares them, are lowercase. */
const LOWER_HEX = /^[0-9a-f]*$/;

export function isTraceId(value: string): boolean {
  return isValidTraceId(value) && LOWER_HEX.test(value);
}

export function isSpanId(value: string): boolean {
  return isValidSpanId(value) && LOWER_HEX.test(value);
}

/** A client-given trace id (`X-Trace-Id`), trimmed and lower-cased, or undefined when it is not a W3C trace id. */
export function normalizeTraceId(value: string | undefined): string | undefined {
  const id = value?.trim().toLowerCase();
  return id !== undefined && isTraceId(id) ? id : undefined;
}

function randomId(bytes: number, invalid: string): string {
  for (;;) {
    const id = randomBytes(bytes).toString('hex');
    if (id !== invalid) return id;
  }
}

export function newTraceId(): string {
  return randomId(16, INVALID_TRACEID);
}

export function newSpanId(): string {
  return randomId(8, INVALID_SPANID);
}
