/**
 * A protobuf writer over one growable byte buffer, made for writing OTLP
 * spans on the message path: no per-field objects (protobufjs's writer
 * allocates one per field), ASCII strings and hex ids copied byte by byte,
 * nested messages either sized up front or framed with a reserved length.
 *
 * Wire format (https://protobuf.dev/programming-guides/encoding/): a field
 * is a varint key `(number << 3) | wire type` (0 varint, 1 fixed64,
 * 2 length-delimited, 5 fixed32) followed by its value.
 */

/** Bytes reserved for the length of a message whose size is not known before it is written: up to 2 MiB. */
const RESERVED_LENGTH_BYTES = 3;
const MAX_RESERVED_LENGTH = 2 ** 21 - 1;
const TWO_32 = 2 ** 32;
const TWO_16 = 2 ** 16;

export const WIRE = { varint: 0, fixed64: 1, bytes: 2, fixed32: 5 } as const;

export function varintSize(value: number): number {
  if (value < 0x80) return 1;
  if (value < 0x4000) return 2;
  if (value < 0x200000) return 3;
  if (value < 0x10000000) return 4;
  let size = 5;
  for (let rest = Math.floor(value / 2 ** 35); rest > 0; rest = Math.floor(rest / 128)) size += 1;
  return size;
}

/** UTF-8 size of `text`; ASCII text (ids, names, types) is its length. */
export function utf8Size(text: string): number {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) >= 0x80) return Buffer.byteLength(text, 'utf8');
  return text.length;
}

/** Writes `seconds` × 1e9 + `nanos` at `at` as a little-endian fixed64, exactly and without BigInt. */
export function putFixed64Time(into: Uint8Array, at: number, seconds: number, nanos: number): void {
  // seconds × 1e9 + nanos = high × 2^32 + low, with every intermediate below 2^53.
  const upper = Math.floor(seconds / TWO_16);
  const lower = seconds - upper * TWO_16;
  const upperProduct = upper * 1e9;
  const upperHigh = Math.floor(upperProduct / TWO_16);
  let low = (upperProduct - upperHigh * TWO_16) * TWO_16 + lower * 1e9 + nanos;
  const carry = Math.floor(low / TWO_32);
  low -= carry * TWO_32;
  const high = upperHigh + carry;
  into[at] = low & 0xff;
  into[at + 1] = (low >>> 8) & 0xff;
  into[at + 2] = (low >>> 16) & 0xff;
  into[at + 3] = low >>> 24;
  into[at + 4] = high & 0xff;
  into[at + 5] = (high >>> 8) & 0xff;
  into[at + 6] = (high >>> 16) & 0xff;
  into[at + 7] = high >>> 24;
}

/** Writes a time in milliseconds since the epoch at `at` as a fixed64 of nanoseconds, split as `msToHrTime` splits it. */
export function putFixed64Ms(into: Uint8Array, at: number, ms: number): void {
  const seconds = Math.floor(ms / 1e3);
  const nanos = Math.round((ms - seconds * 1e3) * 1e6);
  if (nanos >= 1e9) putFixed64Time(into, at, seconds + 1, nanos - 1e9);
  else putFixed64Time(into, at, seconds, nanos);
}

const UTF8 = new TextEncoder();

const HEX = new Int8Array(128).fill(-1);
for (let i = 0; i < 10; i++) HEX[48 + i] = i;
for (let i = 0; i < 6; i++) {
  HEX[97 + i] = 10 + i;
  HEX[65 + i] = 10 + i;
}

/** Writes `hex` (`bytes` × 2 hex digits, either case) as bytes at `at`; false when it is not such hex. */
export function decodeHexInto(into: Uint8Array, at: number, hex: string, bytes: number): boolean {
  if (hex.length !== bytes * 2) return false;
  let bad = 0;
  for (let i = 0; i < bytes; i++) {
    const high = hex.charCodeAt(2 * i);
    const low = hex.charCodeAt(2 * i + 1);
    const h = high < 0x80 ? HEX[high]! : -1;
    const l = low < 0x80 ? HEX[low]! : -1;
    bad |= h | l;
    into[at + i] = (h << 4) | l;
  }
  return bad >= 0;
}

export class ProtoWriter {
  bytes: Uint8Array;
  pos = 0;
  private view: DataView;

  constructor(initialBytes: number) {
    this.bytes = new Uint8Array(initialBytes);
    this.view = new DataView(this.bytes.buffer);
  }

  /** A writer over `bytes` (a buffer being reused), writing from the start. */
  static over(bytes: Uint8Array): ProtoWriter {
    const writer = new ProtoWriter(0);
    writer.bytes = bytes;
    writer.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    return writer;
  }

  /** Makes room for `n` more bytes. */
  ensure(n: number): void {
    if (this.pos + n <= this.bytes.length) return;
    const grown = new Uint8Array(Math.max(this.bytes.length * 2, this.pos + n));
    grown.set(this.bytes.subarray(0, this.pos));
    this.bytes = grown;
    this.view = new DataView(grown.buffer);
  }

  varint(value: number): void {
    if (value < 0x80) {
      if (this.pos >= this.bytes.length) this.ensure(1);
      this.bytes[this.pos++] = value;
      return;
    }
    this.ensure(10);
    let rest = value;
    while (rest >= 0x80) {
      this.bytes[this.pos++] = (rest % 0x80) | 0x80;
      rest = Math.floor(rest / 0x80);
    }
    this.bytes[this.pos++] = rest;
  }

  key(field: number, wire: number): void {
    this.varint(field * 8 + wire);
  }

  /** An int64 field value: negative numbers take ten bytes (two's complement), as protobuf writes them. */
  int64(value: number): void {
    if (value >= 0) {
      this.varint(value);
      return;
    }
    let rest = BigInt.asUintN(64, BigInt(value));
    this.ensure(10);
    while (rest >= 0x80n) {
      this.bytes[this.pos++] = Number(rest & 0x7fn) | 0x80;
      rest >>= 7n;
    }
    this.bytes[this.pos++] = Number(rest);
  }

  fixed32(value: number): void {
    this.ensure(4);
    this.view.setUint32(this.pos, value >>> 0, true);
    this.pos += 4;
  }

  double(value: number): void {
    this.ensure(8);
    this.view.setFloat64(this.pos, value, true);
    this.pos += 8;
  }

  /** A fixed64 of nanoseconds since the epoch, from milliseconds since the epoch (as `msToHrTime` splits them). */
  fixed64Ms(ms: number): void {
    this.ensure(8);
    putFixed64Ms(this.bytes, this.pos, ms);
    this.pos += 8;
  }

  /** A fixed64 of nanoseconds since the epoch, from whole seconds and nanoseconds (exact, without BigInt). */
  fixed64Time(seconds: number, nanos: number): void {
    this.ensure(8);
    putFixed64Time(this.bytes, this.pos, seconds, nanos);
    this.pos += 8;
  }

  /** The bytes of `text` in UTF-8, whose size (`utf8Size`) is `size`. */
  utf8(text: string, size: number): void {
    this.ensure(size);
    if (size === text.length) {
      for (let i = 0; i < size; i++) this.bytes[this.pos + i] = text.charCodeAt(i);
    } else {
      UTF8.encodeInto(text, this.bytes.subarray(this.pos, this.pos + size));
    }
    this.pos += size;
  }

  /** A length-delimited string field; ASCII text (ids, names, types) is copied in one pass. */
  stringField(field: number, text: string): void {
    this.key(field, WIRE.bytes);
    const length = text.length;
    this.ensure(5 + length);
    const mark = this.pos;
    this.varint(length);
    const start = this.pos;
    const bytes = this.bytes;
    for (let i = 0; i < length; i++) {
      const code = text.charCodeAt(i);
      if (code >= 0x80) {
        this.pos = mark;
        this.sizedString(text, Buffer.byteLength(text, 'utf8'));
        return;
      }
      bytes[start + i] = code;
    }
    this.pos = start + length;
  }

  /** A string's length and bytes (after its field key), its UTF-8 size known. */
  sizedString(text: string, size: number): void {
    this.varint(size);
    this.utf8(text, size);
  }

  /** A bytes field holding the bytes that lowercase or uppercase hex `hex` spells. */
  hexField(field: number, hex: string): void {
    const size = hex.length >> 1;
    this.key(field, WIRE.bytes);
    this.varint(size);
    this.ensure(size);
    for (let i = 0; i < size; i++) this.bytes[this.pos + i] = (HEX[hex.charCodeAt(2 * i)]! << 4) | HEX[hex.charCodeAt(2 * i + 1)]!;
    this.pos += size;
  }

  /** Copies `bytes` (a few, such as an encoded key) in. */
  raw(bytes: Uint8Array): void {
    const length = bytes.length;
    this.ensure(length);
    const into = this.bytes;
    const at = this.pos;
    // Byte by byte: for a few bytes this is quicker than a call to `set`.
    for (let i = 0; i < length; i++) into[at + i] = bytes[i]!;
    this.pos = at + length;
  }

  /**
   * Opens a nested message of unknown size as field `field`, keeping
   * `reserve` bytes for its length; `end` with the answer and the same
   * `reserve` closes it. The body moves only when its length takes another
   * number of bytes, so a reserve that fits the usual size saves the move.
   */
  begin(field: number, reserve = RESERVED_LENGTH_BYTES): number {
    this.key(field, WIRE.bytes);
    this.ensure(reserve);
    this.pos += reserve;
    return this.pos;
  }

  end(start: number, reserve = RESERVED_LENGTH_BYTES): void {
    const length = this.pos - start;
    if (length > MAX_RESERVED_LENGTH) throw new RangeError(`nested message of ${length} bytes is over ${MAX_RESERVED_LENGTH}`);
    const size = varintSize(length);
    if (size > reserve) this.ensure(size - reserve);
    const at = start - reserve;
    if (size !== reserve) {
      this.bytes.copyWithin(at + size, start, this.pos);
      this.pos += size - reserve;
    }
    let rest = length;
    for (let i = 0; i < size; i++) {
      this.bytes[at + i] = i === size - 1 ? rest : (rest % 0x80) | 0x80;
      rest = Math.floor(rest / 0x80);
    }
  }

  /** What has been written, copied into a buffer of its own. */
  finish(): Uint8Array {
    return this.bytes.slice(0, this.pos);
  }
}
