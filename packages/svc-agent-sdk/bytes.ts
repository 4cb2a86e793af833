// A growable byte buffer in unmanaged memory, used to build JSON output and
// decoded strings without quadratic string concatenation.

const MIN_CAPACITY: usize = 256;
// A reused sink gives back a buffer grown past this, so one large message does not hold memory forever.
const KEEP_CAPACITY: usize = 64 * 1024;

export class ByteSink {
  ptr: usize;
  len: usize = 0;
  capacity: usize;

  constructor(capacity: usize = MIN_CAPACITY) {
    this.capacity = capacity < MIN_CAPACITY ? MIN_CAPACITY : capacity;
    this.ptr = heap.alloc(this.capacity);
  }

  /** Makes room for `extra` more bytes at `ptr + len`. */
  reserve(extra: usize): void {
    const needed = this.len + extra;
    if (needed <= this.capacity) return;
    let capacity = this.capacity << 1;
    while (capacity < needed) capacity <<= 1;
    this.ptr = heap.realloc(this.ptr, capacity);
    this.capacity = capacity;
  }

  byte(b: u32): void {
    this.reserve(1);
    store<u8>(this.ptr + this.len, <u8>b);
    this.len++;
  }

  /** Appends a string known to be ASCII (keys, punctuation). */
  ascii(text: string): void {
    const n = <usize>text.length;
    this.reserve(n);
    const src = changetype<usize>(text);
    for (let i: usize = 0; i < n; i++) {
      store<u8>(this.ptr + this.len + i, <u8>load<u16>(src + (i << 1)));
    }
    this.len += n;
  }

  /** Appends a Unicode code point as UTF-8. */
  codePoint(cp: u32): void {
    if (cp < 0x80) {
      this.byte(cp);
    } else if (cp < 0x800) {
      this.byte(0xC0 | (cp >> 6));
      this.byte(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      this.byte(0xE0 | (cp >> 12));
      this.byte(0x80 | ((cp >> 6) & 0x3F));
      this.byte(0x80 | (cp & 0x3F));
    } else {
      this.byte(0xF0 | (cp >> 18));
      this.byte(0x80 | ((cp >> 12) & 0x3F));
      this.byte(0x80 | ((cp >> 6) & 0x3F));
      this.byte(0x80 | (cp & 0x3F));
    }
  }

  /** Appends a string as UTF-8; surrogate pairs are joined, a lone surrogate becomes U+FFFD. */
  text(text: string): void {
    const src = changetype<usize>(text);
    const n = text.length;
    for (let i = 0; i < n; i++) {
      let cp = <u32>load<u16>(src + (<usize>i << 1));
      if (cp >= 0xD800 && cp <= 0xDFFF) {
        const low = i + 1 < n ? <u32>load<u16>(src + (<usize>(i + 1) << 1)) : 0;
        if (cp <= 0xDBFF && low >= 0xDC00 && low <= 0xDFFF) {
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          i++;
        } else {
          cp = 0xFFFD;
        }
      }
      this.codePoint(cp);
    }
  }

  bytes(ptr: usize, len: usize): void {
    this.reserve(len);
    // Without bulk memory, asc lowers memory.copy to its own word-wise loop.
    memory.copy(this.ptr + this.len, ptr, len);
    this.len += len;
  }

  /** Empties the sink for reuse; a buffer grown large is replaced by a small one. */
  clear(): void {
    this.len = 0;
    if (this.capacity <= KEEP_CAPACITY) return;
    heap.free(this.ptr);
    this.capacity = MIN_CAPACITY;
    this.ptr = heap.alloc(MIN_CAPACITY);
  }

  toUtf8String(): string {
    return String.UTF8.decodeUnsafe(this.ptr, this.len);
  }

  free(): void {
    heap.free(this.ptr);
    this.ptr = 0;
    this.len = 0;
    this.capacity = 0;
  }
}
