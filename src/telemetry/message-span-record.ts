/**
 * The spans of the message path (light-span.ts) written into a chunk in one
 * pass: the same OTLP bytes `writeSpan` (span-record.ts) writes, for the
 * shape those spans have, with the buffer and position held in locals and
 * each length known before its bytes, and the ids copied as the span holds
 * them, in bytes, rather than read from hex, and the fields of attribute
 * values that repeat copied whole once written: quicker than the general
 * writer (a call per field, a check for room per field). Writing two spans a
 * message at 50–100k messages a second is about half the CPU tracing costs
 * at `trace_sample_rate` 1.0
 * (docs/benchmarks.md, "Eleventh pass" and "Twelfth pass").
 *
 * The shape: ids held as bytes (a light span keeps them so), a parent, no
 * `tracestate`, events or links, and attributes that are ASCII strings or
 * non-negative integers, each key and value pair under 128 bytes. Any other
 * span (and there are few on this path: a failed execution's status, an
 * exception event) is written by `writeSpan`.
 */
import { ANY, SCOPE_SPANS_SPAN_FIELD, SPAN, spanFlags } from './otlp-trace-fields.js';
import { putFixed64Ms, WIRE, type ProtoWriter } from './proto-writer.js';
import type { SpanHead } from './span-record.js';
import { SPAN_ATTRIBUTES } from './span-names.js';

/**
 * A span as the one-pass writer reads it: a `SpanHead` whose ids are also
 * held as bytes, the trace id's 16 at `traceAt` of `traceBlock`, the span's
 * 8 at `idAt` of `idBlock` and its parent's 8 at `parentAt` of `parentBlock`.
 */
export interface MessagePathSpan extends Omit<SpanHead, 'traceId' | 'spanId' | 'parentSpanId'> {
  readonly traceBlock: Uint8Array;
  readonly traceAt: number;
  readonly idBlock: Uint8Array;
  readonly idAt: number;
  readonly parentBlock: Uint8Array;
  readonly parentAt: number;
}

const TAG = {
  span: SCOPE_SPANS_SPAN_FIELD * 8 + WIRE.bytes,
  traceId: SPAN.traceId * 8 + WIRE.bytes,
  spanId: SPAN.spanId * 8 + WIRE.bytes,
  parentSpanId: SPAN.parentSpanId * 8 + WIRE.bytes,
  name: SPAN.name * 8 + WIRE.bytes,
  kind: SPAN.kind * 8 + WIRE.varint,
  start: SPAN.start * 8 + WIRE.fixed64,
  end: SPAN.end * 8 + WIRE.fixed64,
  attribute: SPAN.attributes * 8 + WIRE.bytes,
  status: SPAN.status * 8 + WIRE.bytes,
  /** Field 16 takes two bytes of key. */
  flags: [((SPAN.flags * 8 + WIRE.fixed32) & 0x7f) | 0x80, (SPAN.flags * 8 + WIRE.fixed32) >> 7],
  key: 1 * 8 + WIRE.bytes,
  value: 2 * 8 + WIRE.bytes,
  string: ANY.string * 8 + WIRE.bytes,
  int: ANY.int * 8 + WIRE.varint,
} as const;

/**
 * Bytes a span of this shape takes besides its name and attributes: the
 * span's own key and two bytes of length, three ids with their keys and
 * lengths, kind, two times, an empty status and the flags.
 */
const FIXED_BYTES = 3 + 18 + 10 + 10 + 2 + 9 + 9 + 2 + 6;
/** The span's length is kept in two bytes: 128 to 16,383. */
const MAX_BODY = 0x3fff;

/** Copies `count` bytes from `at` of `from` to `to` of `into`: a few, quicker by hand than by a call to `set`. */
function copyBytes(into: Uint8Array, to: number, from: Uint8Array, at: number, count: number): void {
  for (let i = 0; i < count; i++) into[to + i] = from[at + i]!;
}

/** Copies ASCII `text` to `at`; false when it holds any other character (what was copied is then overwritten). */
function writeAscii(into: Uint8Array, at: number, text: string): boolean {
  let high = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    high |= code;
    into[at + i] = code;
  }
  return high < 0x80;
}

/** Bytes a varint of `value` (a non-negative safe integer) takes. */
function varintBytes(value: number): number {
  let size = 1;
  for (let rest = value; rest >= 0x80; rest = Math.floor(rest / 0x80)) size += 1;
  return size;
}

function writeVarint(into: Uint8Array, at: number, value: number): number {
  let rest = value;
  let i = at;
  while (rest >= 0x80) {
    into[i++] = (rest % 0x80) | 0x80;
    rest = Math.floor(rest / 0x80);
  }
  into[i++] = rest;
  return i;
}

/**
 * Attributes whose values repeat from span to span: the agents' ids, a
 * conversation's id, a performative, an outcome. Their whole attribute
 * field (tag, length, key and value) is kept once encoded and copied with
 * one `set`, where the character loop costs 2.5–4 ns a character: the
 * message path writes about 200 such characters a span. A message's own id
 * is never the same twice and is not kept.
 */
export const REPEATING_ATTRIBUTES: readonly string[] = [
  SPAN_ATTRIBUTES.agentId,
  SPAN_ATTRIBUTES.messageType,
  SPAN_ATTRIBUTES.messageSender,
  SPAN_ATTRIBUTES.messageReceiver,
  SPAN_ATTRIBUTES.conversationId,
  SPAN_ATTRIBUTES.executionStatus,
];
/** Encoded fields kept for each repeating key; a full table is emptied and fills again with the values in use. */
export const KEPT_VALUES_PER_KEY = 4096;
const kept = new Map<string, Map<string, Uint8Array>>(REPEATING_ATTRIBUTES.map((key) => [key, new Map<string, Uint8Array>()]));

/** Encoded fields kept now for `key` (for tests: the tables fill and stay bounded). */
export function keptValueCount(key: string): number {
  return kept.get(key)?.size ?? 0;
}

/** Keeps `field`, the bytes just written for `value`; a full table is emptied first. */
function keep(values: Map<string, Uint8Array>, value: string, field: Uint8Array): void {
  if (values.size >= KEPT_VALUES_PER_KEY) values.clear();
  values.set(value, field);
}

/**
 * Appends a span of the message path's shape to `w`, as a `ScopeSpans.spans`
 * field, and answers true; answers false, with nothing written, for a span
 * of any other shape (the caller writes it with `writeSpan`).
 */
export function writeMessagePathSpan(w: ProtoWriter, head: MessagePathSpan, attributes: readonly unknown[]): boolean {
  const name = head.name;
  const startTime = head.startTime;
  const endTime = head.endTime;
  if (
    head.traceState !== '' ||
    head.statusCode !== 0 ||
    head.statusMessage !== '' ||
    typeof startTime !== 'number' ||
    typeof endTime !== 'number' ||
    name.length >= 0x80 ||
    head.kind < 0 ||
    head.kind > 126
  ) {
    return false;
  }
  // The most the attributes can take: each pair under 128 bytes, plus its key and length.
  const count = attributes.length >> 1;
  const room = FIXED_BYTES + 2 + name.length + count * 130;
  w.ensure(room);
  const into = w.bytes;
  const begin = w.pos;
  let at = begin;
  into[at] = TAG.span;
  at += 3;
  const body = at;
  into[at] = TAG.traceId;
  into[at + 1] = 16;
  copyBytes(into, at + 2, head.traceBlock, head.traceAt, 16);
  at += 18;
  into[at] = TAG.spanId;
  into[at + 1] = 8;
  copyBytes(into, at + 2, head.idBlock, head.idAt, 8);
  at += 10;
  into[at] = TAG.parentSpanId;
  into[at + 1] = 8;
  copyBytes(into, at + 2, head.parentBlock, head.parentAt, 8);
  at += 10;
  into[at] = TAG.name;
  into[at + 1] = name.length;
  if (!writeAscii(into, at + 2, name)) return false;
  at += 2 + name.length;
  // OTLP's kinds are the API's plus one (0 is unspecified).
  into[at] = TAG.kind;
  into[at + 1] = head.kind + 1;
  into[at + 2] = TAG.start;
  putFixed64Ms(into, at + 3, startTime);
  into[at + 11] = TAG.end;
  putFixed64Ms(into, at + 12, endTime);
  at += 20;
  for (let i = 0; i + 1 < attributes.length; i += 2) {
    const key = attributes[i];
    const value = attributes[i + 1];
    if (typeof key !== 'string') return false;
    // A repeating value's field is copied as kept; at its first use it is written below, then kept.
    let values: Map<string, Uint8Array> | undefined;
    if (typeof value === 'string') {
      values = kept.get(key);
      const field = values?.get(value);
      if (field !== undefined) {
        into.set(field, at);
        at += field.length;
        continue;
      }
    }
    const fieldStart = at;
    const keyLength = key.length;
    // The AnyValue's size: a string (tag, length, text) or a varint (tag, value).
    let anySize: number;
    if (typeof value === 'string') anySize = value.length + 2;
    else if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) anySize = varintBytes(value) + 1;
    else return false;
    // KeyValue: key (tag, length, text), then value (tag, length) around the AnyValue.
    const pair = keyLength + anySize + 4;
    if (pair >= 0x80) return false;
    into[at] = TAG.attribute;
    into[at + 1] = pair;
    into[at + 2] = TAG.key;
    into[at + 3] = keyLength;
    if (!writeAscii(into, at + 4, key)) return false;
    const v = at + 4 + keyLength;
    into[v] = TAG.value;
    into[v + 1] = anySize;
    if (typeof value === 'string') {
      into[v + 2] = TAG.string;
      into[v + 3] = value.length;
      if (!writeAscii(into, v + 4, value)) return false;
      at = v + 4 + value.length;
      if (values !== undefined) keep(values, value, into.slice(fieldStart, at));
    } else {
      into[v + 2] = TAG.int;
      at = writeVarint(into, v + 3, value);
    }
  }
  // An empty Status, then the flags.
  into[at] = TAG.status;
  into[at + 1] = 0;
  into[at + 2] = TAG.flags[0];
  into[at + 3] = TAG.flags[1];
  const flags = spanFlags(head.traceFlags, head.parentIsRemote);
  into[at + 4] = flags & 0xff;
  into[at + 5] = (flags >>> 8) & 0xff;
  into[at + 6] = (flags >>> 16) & 0xff;
  into[at + 7] = flags >>> 24;
  at += 8;
  const length = at - body;
  if (length < 0x80 || length > MAX_BODY) return false;
  into[begin + 1] = (length & 0x7f) | 0x80;
  into[begin + 2] = length >> 7;
  w.pos = at;
  return true;
}
