/**
 * Bounds-checked reader over WebAssembly binary bytes. Every failure is a
 * `WasmReadError` carrying the byte offset where decoding stopped; no read can
 * run past the window it was given.
 */

/** Decoding failed at `offset` (truncated input, over-long or non-canonical LEB128, bad UTF-8). */
export class WasmReadError extends Error {
  override readonly name = 'WasmReadError';

  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(`${message} at offset ${offset}`);
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

export class WasmReader {
  /** Absolute offset of the next byte to read. */
  pos: number;
  /** Absolute offset one past the last readable byte. */
  readonly end: number;

  constructor(
    readonly bytes: Uint8Array,
    start = 0,
    end = bytes.length,
  ) {
    this.pos = start;
    this.end = end;
  }

  get remaining(): number {
    return this.end - this.pos;
  }

  atEnd(): boolean {
    return this.pos >= this.end;
  }

  fail(message: string, offset = this.pos): never {
    throw new WasmReadError(message, offset);
  }

  peek(): number {
    if (this.pos >= this.end) this.fail('unexpected end of input');
    return this.bytes[this.pos] as number;
  }

  u8(): number {
    const value = this.peek();
    this.pos += 1;
    return value;
  }

  /** Advances over `count` bytes and returns where they started. */
  skip(count: number): number {
    if (count < 0 || count > this.remaining) this.fail(`${count} bytes needed, ${this.remaining} left`);
    const start = this.pos;
    this.pos += count;
    return start;
  }

  take(count: number): Uint8Array {
    const start = this.skip(count);
    return this.bytes.subarray(start, start + count);
  }

  /** A reader over the next `length` bytes; this reader moves past them. */
  window(length: number): WasmReader {
    const start = this.skip(length);
    return new WasmReader(this.bytes, start, start + length);
  }

  /** Unsigned LEB128 of at most 32 bits (5 bytes, unused high bits zero). */
  u32(): number {
    const start = this.pos;
    let result = 0;
    for (let i = 0; i < 5; i++) {
      const byte = this.u8();
      if (i === 4 && byte > 0x0f) this.fail('u32 LEB128 out of range', start);
      result += (byte & 0x7f) * 2 ** (7 * i);
      if ((byte & 0x80) === 0) return result;
    }
    return this.fail('u32 LEB128 longer than 5 bytes', start);
  }

  /** Signed LEB128 of at most `bits` bits (32 or 33), as a number. */
  private signed(bits: 32 | 33): number {
    const start = this.pos;
    let result = 0;
    const maxBytes = 5;
    for (let i = 0; i < maxBytes; i++) {
      const byte = this.u8();
      if (i === maxBytes - 1) {
        // The last byte carries bits - 28 value bits; the rest must copy the sign bit.
        const used = bits - 28;
        const signBit = (byte >> (used - 1)) & 1;
        const rest = (byte & 0x7f) >> used;
        const expected = signBit ? 0x7f >> used : 0;
        if (byte & 0x80 || rest !== expected) this.fail(`s${bits} LEB128 out of range`, start);
      }
      result += (byte & 0x7f) * 2 ** (7 * i);
      if ((byte & 0x80) === 0) {
        const width = 7 * (i + 1);
        if (byte & 0x40) result -= 2 ** width;
        return result;
      }
    }
    return this.fail(`s${bits} LEB128 too long`, start);
  }

  s32(): number {
    return this.signed(32);
  }

  /** Block type index encoding (signed 33-bit). */
  s33(): number {
    return this.signed(33);
  }

  s64(): bigint {
    const start = this.pos;
    let result = 0n;
    for (let i = 0; i < 10; i++) {
      const byte = this.u8();
      if (i === 9 && byte !== 0x00 && byte !== 0x7f) this.fail('s64 LEB128 out of range', start);
      result |= BigInt(byte & 0x7f) << BigInt(7 * i);
      if ((byte & 0x80) === 0) {
        return BigInt.asIntN(64, byte & 0x40 ? result - (1n << BigInt(7 * (i + 1))) : result);
      }
    }
    return this.fail('s64 LEB128 too long', start);
  }

  /** A length-prefixed UTF-8 name. */
  name(): string {
    const start = this.pos;
    const length = this.u32();
    const raw = this.take(length);
    try {
      return utf8.decode(raw);
    } catch {
      return this.fail('name is not valid UTF-8', start);
    }
  }

  /** A vector length, refused early when it cannot fit in the remaining bytes (each entry takes at least `minEntryBytes`). */
  count(minEntryBytes = 1): number {
    const start = this.pos;
    const n = this.u32();
    if (n * minEntryBytes > this.remaining) this.fail(`vector of ${n} entries cannot fit in ${this.remaining} bytes`, start);
    return n;
  }

  expectEnd(what: string): void {
    if (this.pos !== this.end) this.fail(`${this.end - this.pos} unread bytes at the end of ${what}`);
  }
}
