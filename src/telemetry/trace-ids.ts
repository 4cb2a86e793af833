/**
 * W3C Trace Context ids (https://www.w3.org/TR/trace-context/#trace-id):
 * a trace id is 16 bytes and a span id 8 bytes, written as lowercase hex,
 * never all zeros. These are the ids of every span the tracer starts, so a
 * `trace_id` exists for error bodies and log lines whether tracing is on or off.
 */
import { randomBytes, randomFillSync } from 'node:crypto';

const TRACE_ID = /^[0-9a-f]{32}$/;
const SPAN_ID = /^[0-9a-f]{16}$/;
const ZERO_TRACE_ID = '0'.repeat(32);
const ZERO_SPAN_ID = '0'.repeat(16);

/** One `randomBytes` call per id is a syscall per span; one pooled block serves this many bytes of ids. */
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let offset = 0;

/** The two lowercase hex digits of each byte value, as character codes: byte b is at 2b and 2b + 1. */
const HEX_DIGITS = new Uint8Array(512);
for (let b = 0; b < 256; b++) {
  const digits = b.toString(16).padStart(2, '0');
  HEX_DIGITS[2 * b] = digits.charCodeAt(0);
  HEX_DIGITS[2 * b + 1] = digits.charCodeAt(1);
}

/** Eight bytes of `bytes` from `at` as 16 hex digits: one flat string, without a call into C++ (`toString('hex')`). */
export function hex8(bytes: Uint8Array, at: number): string {
  const d = HEX_DIGITS;
  const b0 = bytes[at]! * 2;
  const b1 = bytes[at + 1]! * 2;
  const b2 = bytes[at + 2]! * 2;
  const b3 = bytes[at + 3]! * 2;
  const b4 = bytes[at + 4]! * 2;
  const b5 = bytes[at + 5]! * 2;
  const b6 = bytes[at + 6]! * 2;
  const b7 = bytes[at + 7]! * 2;
  return String.fromCharCode(
    d[b0]!, d[b0 + 1]!, d[b1]!, d[b1 + 1]!, d[b2]!, d[b2 + 1]!, d[b3]!, d[b3 + 1]!,
    d[b4]!, d[b4 + 1]!, d[b5]!, d[b5 + 1]!, d[b6]!, d[b6 + 1]!, d[b7]!, d[b7 + 1]!,
  );
}

/** `bytes` random bytes (8 or 16) as lowercase hex. */
function randomHex(bytes: 8 | 16): string {
  if (offset + bytes > pool.length) {
    pool = randomBytes(POOL_BYTES);
    offset = 0;
  }
  const at = offset;
  offset += bytes;
  return bytes === 8 ? hex8(pool, at) : hex8(pool, at) + hex8(pool, at + 8);
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

/** Bytes of a block of light span ids: 512 ids. */
const SPAN_ID_BLOCK_BYTES = 4096;
/**
 * Random bytes drawn per `randomFillSync` call: 16 blocks. In the running
 * server a call took 50–65 µs for 4 KiB and about 90 µs for 64 KiB (4–7 and
 * 13–18 µs alone in a loop; docs/benchmarks.md, "Twenty-second pass"): a
 * call per block was 0.25 µs a traced message.
 */
const SPAN_ID_POOL_BYTES = 16 * SPAN_ID_BLOCK_BYTES;

/**
 * Span ids for the message path's light spans (light-span.ts), kept as
 * bytes: such a span writes its id into the OTLP record as it is and spells
 * it in hex only when something asks (a `traceparent`, a span context).
 * `next` moves `at` to 8 fresh random bytes of `block`; a block is never
 * rewritten, so a span keeps `block` and `at` rather than a copy.
 *
 * A block is a copy of the next 4 KiB of a larger pool of random bytes, not
 * a view of it: a span keeps its block alive (and its parent's), so a few
 * long executions in flight hold 4 KiB each rather than the whole pool.
 */
export class SpanIdBlocks {
  block = new Uint8Array(0);
  at = 0;
  private readonly pool = new Uint8Array(SPAN_ID_POOL_BYTES);
  private poolAt = SPAN_ID_POOL_BYTES;

  private nextBlock(): Uint8Array<ArrayBuffer> {
    if (this.poolAt === SPAN_ID_POOL_BYTES) {
      randomFillSync(this.pool);
      this.poolAt = 0;
    }
    const from = this.poolAt;
    this.poolAt += SPAN_ID_BLOCK_BYTES;
    return this.pool.slice(from, from + SPAN_ID_BLOCK_BYTES);
  }

  next(): void {
    for (;;) {
      const at = this.at + 8;
      if (at + 8 > this.block.length) {
        this.block = this.nextBlock();
        this.at = 0;
      } else this.at = at;
      const block = this.block;
      const from = this.at;
      if ((block[from]! | block[from + 1]! | block[from + 2]! | block[from + 3]! | block[from + 4]! | block[from + 5]! | block[from + 6]! | block[from + 7]!) !== 0) return;
    }
  }
}
