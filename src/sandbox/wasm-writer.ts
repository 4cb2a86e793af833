/** Growable byte buffer with the WebAssembly binary encodings the instrumenter emits. */
export class WasmWriter {
  private buffer: Uint8Array;
  private length = 0;

  constructor(initialCapacity = 1024) {
    this.buffer = new Uint8Array(Math.max(16, initialCapacity));
  }

  get size(): number {
    return this.length;
  }

  private reserve(extra: number): void {
    const needed = this.length + extra;
    if (needed <= this.buffer.length) return;
    let capacity = this.buffer.length * 2;
    while (capacity < needed) capacity *= 2;
    const next = new Uint8Array(capacity);
    next.set(this.buffer.subarray(0, this.length));
    this.buffer = next;
  }

  byte(value: number): this {
    this.reserve(1);
    this.buffer[this.length++] = value & 0xff;
    return this;
  }

  bytes(values: Uint8Array | readonly number[]): this {
    this.reserve(values.length);
    this.buffer.set(values, this.length);
    this.length += values.length;
    return this;
  }

  u32(value: number): this {
    if (!Number.isInteger(value) || value < 0 || value > 0xffffffff) throw new RangeError(`not a u32: ${value}`);
    let rest = value;
    do {
      const low = rest % 128;
      rest = Math.floor(rest / 128);
      this.byte(rest === 0 ? low : low | 0x80);
    } while (rest !== 0);
    return this;
  }

  s32(value: number): this {
    if (!Number.isInteger(value) || value < -0x80000000 || value > 0x7fffffff) throw new RangeError(`not an s32: ${value}`);
    return this.s64(BigInt(value));
  }

  s64(value: bigint): this {
    let rest = BigInt.asIntN(64, value);
    if (rest !== value) throw new RangeError(`not an s64: ${value}`);
    for (;;) {
      const low = Number(rest & 0x7fn);
      rest >>= 7n;
      const done = (rest === 0n && (low & 0x40) === 0) || (rest === -1n && (low & 0x40) !== 0);
      this.byte(done ? low : low | 0x80);
      if (done) return this;
    }
  }

  name(value: string): this {
    const encoded = new TextEncoder().encode(value);
    return this.u32(encoded.length).bytes(encoded);
  }

  /** Writes `content` as a section: id, LEB128 size, bytes. */
  section(id: number, content: WasmWriter): this {
    return this.byte(id).u32(content.size).bytes(content.view());
  }

  /** The bytes written so far, without copying (valid until the next write). */
  view(): Uint8Array {
    return this.buffer.subarray(0, this.length);
  }

  /** A copy of the bytes written so far. */
  toBytes(): Uint8Array {
    return this.buffer.slice(0, this.length);
  }
}
