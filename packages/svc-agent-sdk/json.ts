// Just enough JSON for the Message document: reading an object field by field
// (any value as text, nested ones skippable) and writing objects of strings.
// Every message goes through here, so the common case (ASCII text without
// escapes) takes short paths that allocate only the strings handed out.

import { ByteSink } from "./bytes";

const QUOTE: u32 = 0x22;
const BACKSLASH: u32 = 0x5C;
const REPLACEMENT_CHARACTER: u32 = 0xFFFD;

// Eight bytes at a time: a string's bytes are scanned a word at a time while none of
// them ends the string or starts an escape (the common case: ids, trace context).
const ONES: u64 = 0x0101010101010101;
const HIGHS: u64 = 0x8080808080808080;
const QUOTES: u64 = 0x2222222222222222;
const BACKSLASHES: u64 = 0x5C5C5C5C5C5C5C5C;

/** Whether one of the eight bytes of `word` is a quote or a backslash (a zero byte after xor, found exactly). */
// @ts-ignore: decorator
@inline function hasQuoteOrBackslash(word: u64): bool {
  const q = word ^ QUOTES;
  const b = word ^ BACKSLASHES;
  return ((((q - ONES) & ~q) | ((b - ONES) & ~b)) & HIGHS) != 0;
}

function isWhitespace(c: u32): bool {
  return c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D;
}

/** What `readKey` returns for a key that is none of the names it was given. */
export const OTHER_KEY: i32 = -1;
/** What `readKey` returns when there is no well-formed key. */
export const BAD_KEY: i32 = -2;

/** A string of `len` ASCII bytes at `ptr`: each byte is its UTF-16 unit, so there is nothing to decode. */
function asciiString(ptr: usize, len: usize): string {
  if (len == 0) return "";
  const out = __new(len << 1, idof<string>());
  for (let i: usize = 0; i < len; i++) store<u16>(out + (i << 1), load<u8>(ptr + i));
  return changetype<string>(out);
}

/** Whether the `len` bytes at `ptr` spell `name` (which is ASCII). */
function bytesEqual(ptr: usize, len: usize, name: string): bool {
  if (<usize>name.length != len) return false;
  const src = changetype<usize>(name);
  for (let i: usize = 0; i < len; i++) {
    if (<u32>load<u8>(ptr + i) != <u32>load<u16>(src + (i << 1))) return false;
  }
  return true;
}

function hexValue(c: u32): i32 {
  if (c >= 0x30 && c <= 0x39) return <i32>(c - 0x30);
  if (c >= 0x61 && c <= 0x66) return <i32>(c - 0x61 + 10);
  if (c >= 0x41 && c <= 0x46) return <i32>(c - 0x41 + 10);
  return -1;
}

/** A cursor over UTF-8 JSON text in memory. Every method returns false (or null) on malformed input. */
export class JsonReader {
  private pos: usize;
  private end: usize;

  constructor(ptr: usize, len: usize) {
    this.pos = ptr;
    this.end = ptr + len;
  }

  /** The next non-whitespace byte without consuming it, or -1 at the end. */
  peek(): i32 {
    // Cursor loops keep the position in a local: a field is a load and a store of memory each pass.
    const end = this.end;
    let at = this.pos;
    while (at < end && isWhitespace(load<u8>(at))) at++;
    this.pos = at;
    return at < end ? <i32>load<u8>(at) : -1;
  }

  /** Consumes `c` if it is the next non-whitespace byte. */
  accept(c: u32): bool {
    if (this.peek() != <i32>c) return false;
    this.pos++;
    return true;
  }

  atEnd(): bool {
    return this.peek() < 0;
  }

  /** Where the cursor is: the address of the next byte. */
  get position(): usize {
    return this.pos;
  }

  /** Skips a string value (after any whitespace) without making it; false if there is none. */
  skipStringValue(): bool {
    return this.peek() == <i32>QUOTE && this.skipString();
  }

  /** Reads a string value (the cursor is at its opening quote). */
  readString(): string | null {
    if (!this.accept(QUOTE)) return null;
    const start = this.pos;
    const end = this.end;
    let at = start;
    let wide: u64 = 0;
    while (at + 8 <= end) {
      const word = load<u64>(at);
      if (hasQuoteOrBackslash(word)) break;
      wide |= word;
      at += 8;
    }
    let bits: u32 = (wide & HIGHS) != 0 ? 0x80 : 0;
    // Fast path: no escapes, the bytes are the string (and, when all are ASCII, its UTF-16 units).
    while (at < end) {
      const c = <u32>load<u8>(at);
      if (c == QUOTE) {
        this.pos = at + 1;
        const len = at - start;
        return bits < 0x80 ? asciiString(start, len) : String.UTF8.decodeUnsafe(start, len);
      }
      if (c == BACKSLASH) break;
      bits |= c;
      at++;
    }
    this.pos = at;
    if (at >= end) return null;
    const sink = new ByteSink(this.pos - start + 64);
    sink.bytes(start, this.pos - start);
    const ok = this.readEscapedRest(sink);
    const text = ok ? sink.toUtf8String() : null;
    sink.free();
    return text;
  }

  /**
   * Reads an object key (the cursor is at its opening quote) and returns the index of the
   * first of `names` it equals, `OTHER_KEY` for any other key, or `BAD_KEY`. A key without
   * escapes, as they come, is matched in place: no string is made for it.
   */
  readKey(names: StaticArray<string>): i32 {
    if (this.peek() != <i32>QUOTE) return BAD_KEY;
    const start = this.pos + 1;
    let at = start;
    while (at < this.end) {
      const c = <u32>load<u8>(at);
      if (c == BACKSLASH) {
        const key = this.readString();
        if (key == null) return BAD_KEY;
        for (let i = 0; i < names.length; i++) if (names[i] == key) return i;
        return OTHER_KEY;
      }
      if (c == QUOTE) {
        this.pos = at + 1;
        for (let i = 0; i < names.length; i++) if (bytesEqual(start, at - start, unchecked(names[i]))) return i;
        return OTHER_KEY;
      }
      at++;
    }
    return BAD_KEY;
  }

  private readEscapedRest(sink: ByteSink): bool {
    while (this.pos < this.end) {
      const c = <u32>load<u8>(this.pos++);
      if (c == QUOTE) return true;
      if (c != BACKSLASH) {
        sink.byte(c);
        continue;
      }
      if (this.pos >= this.end) return false;
      const e = <u32>load<u8>(this.pos++);
      switch (e) {
        case 0x22: sink.byte(0x22); break;
        case 0x5C: sink.byte(0x5C); break;
        case 0x2F: sink.byte(0x2F); break;
        case 0x62: sink.byte(0x08); break;
        case 0x66: sink.byte(0x0C); break;
        case 0x6E: sink.byte(0x0A); break;
        case 0x72: sink.byte(0x0D); break;
        case 0x74: sink.byte(0x09); break;
        case 0x75: {
          const unit = this.readHex4();
          if (unit < 0) return false;
          sink.codePoint(this.completeSurrogate(<u32>unit));
          break;
        }
        default: return false;
      }
    }
    return false;
  }

  private readHex4(): i32 {
    if (this.end - this.pos < 4) return -1;
    let value: i32 = 0;
    for (let i = 0; i < 4; i++) {
      const digit = hexValue(load<u8>(this.pos++));
      if (digit < 0) return -1;
      value = (value << 4) | digit;
    }
    return value;
  }

  /** Joins a \uD8xx\uDCxx pair into one code point; a lone surrogate becomes U+FFFD. */
  private completeSurrogate(unit: u32): u32 {
    if (unit < 0xD800 || unit > 0xDFFF) return unit;
    if (unit >= 0xDC00) return REPLACEMENT_CHARACTER;
    if (this.end - this.pos >= 6 && load<u8>(this.pos) == BACKSLASH && load<u8>(this.pos + 1) == 0x75) {
      const save = this.pos;
      this.pos += 2;
      const low = this.readHex4();
      if (low >= 0xDC00 && low <= 0xDFFF) {
        return 0x10000 + ((unit - 0xD800) << 10) + (<u32>low - 0xDC00);
      }
      this.pos = save;
    }
    return REPLACEMENT_CHARACTER;
  }

  /**
   * Reads any value as text: a string's value, null as "", and anything else
   * (number, true, false, object, array) as its JSON text.
   */
  readText(): string | null {
    const c = this.peek();
    if (c == QUOTE) return this.readString();
    const start = this.pos;
    if (!this.skipValue()) return null;
    const text = String.UTF8.decodeUnsafe(start, this.pos - start);
    return text == "null" ? "" : text;
  }

  /** Skips a number, true, false or null, up to the next delimiter. */
  private skipBareScalar(): bool {
    const start = this.pos;
    while (this.pos < this.end) {
      const b = <u32>load<u8>(this.pos);
      if (b == 0x2C || b == 0x3A || b == 0x7D || b == 0x5D || isWhitespace(b)) break;
      this.pos++;
    }
    return this.pos > start;
  }

  /** Skips one value of any kind. Iterative, so deep nesting cannot exhaust the stack. */
  skipValue(): bool {
    let depth: i32 = 0;
    do {
      const c = this.peek();
      if (c < 0) return false;
      if (c == 0x7B || c == 0x5B) {
        depth++;
        this.pos++;
      } else if (c == 0x7D || c == 0x5D) {
        if (depth == 0) return false;
        depth--;
        this.pos++;
      } else if (c == 0x2C || c == 0x3A) {
        if (depth == 0) return false;
        this.pos++;
      } else if (c == QUOTE) {
        if (!this.skipString()) return false;
      } else if (!this.skipBareScalar()) {
        return false;
      }
    } while (depth > 0);
    return true;
  }

  private skipString(): bool {
    const end = this.end;
    let at = this.pos + 1;
    while (at + 8 <= end && !hasQuoteOrBackslash(load<u64>(at))) at += 8;
    while (at < end) {
      const c = <u32>load<u8>(at++);
      if (c == QUOTE) {
        this.pos = at;
        return true;
      }
      if (c == BACKSLASH) at++;
    }
    this.pos = at;
    return false;
  }
}

/** Writes a JSON object of string fields as UTF-8. */
export class JsonWriter {
  private fields: i32 = 0;

  constructor(public sink: ByteSink) {
    sink.byte(0x7B);
  }

  /** Adds `"key": "value"`. */
  field(key: string, value: string): void {
    writeJsonField(this.sink, this.fields++ == 0, key, value);
  }

  /** Opens a nested object under `key` and returns its writer; call `close()` on it. */
  object(key: string): JsonWriter {
    writeJsonKey(this.sink, this.fields++ == 0, key);
    return new JsonWriter(this.sink);
  }

  close(): void {
    this.sink.byte(0x7D);
  }
}

/** Writes `"key":`, after a comma unless it is the first of its object. */
export function writeJsonKey(sink: ByteSink, first: bool, key: string): void {
  if (!first) sink.byte(0x2C);
  writeJsonString(sink, key);
  sink.byte(0x3A);
}

/** Writes `"key":"value"`, after a comma unless it is the first of its object. */
export function writeJsonField(sink: ByteSink, first: bool, key: string, value: string): void {
  writeJsonKey(sink, first, key);
  writeJsonString(sink, value);
}

/** Writes `text` as a quoted JSON string in UTF-8. Lone surrogates are kept as \u escapes. */
export function writeJsonString(sink: ByteSink, text: string): void {
  const src = changetype<usize>(text);
  const n = text.length;
  // Room for one byte per unit and the quotes: printable ASCII is then stored without checks.
  sink.reserve(<usize>n + 2);
  let out = sink.ptr + sink.len;
  store<u8>(out++, QUOTE);
  for (let i = 0; i < n; i++) {
    const c = <u32>load<u16>(src + (<usize>i << 1));
    if (c >= 0x20 && c < 0x80 && c != QUOTE && c != BACKSLASH) {
      store<u8>(out++, <u8>c);
      continue;
    }
    sink.len = out - sink.ptr;
    i = writeSpecialUnit(sink, src, i, n);
    // Room again for one byte per unit left (n - i - 1) and the closing quote.
    sink.reserve(<usize>(n - i));
    out = sink.ptr + sink.len;
  }
  store<u8>(out++, QUOTE);
  sink.len = out - sink.ptr;
}

/** Writes the unit at `i` that is not printable ASCII (and its low surrogate); returns the last index used. */
function writeSpecialUnit(sink: ByteSink, src: usize, i: i32, n: i32): i32 {
  const c = <u32>load<u16>(src + (<usize>i << 1));
  if (c == QUOTE || c == BACKSLASH) {
    sink.byte(BACKSLASH);
    sink.byte(c);
  } else if (c < 0x20) {
    writeControl(sink, c);
  } else if (c >= 0xD800 && c <= 0xDBFF && i + 1 < n) {
    const low = <u32>load<u16>(src + (<usize>(i + 1) << 1));
    if (low >= 0xDC00 && low <= 0xDFFF) {
      sink.codePoint(0x10000 + ((c - 0xD800) << 10) + (low - 0xDC00));
      i++;
    } else {
      writeUnicodeEscape(sink, c);
    }
  } else if (c >= 0xD800 && c <= 0xDFFF) {
    writeUnicodeEscape(sink, c);
  } else {
    sink.codePoint(c);
  }
  return i;
}

function writeControl(sink: ByteSink, c: u32): void {
  switch (c) {
    case 0x0A: sink.ascii("\\n"); break;
    case 0x0D: sink.ascii("\\r"); break;
    case 0x09: sink.ascii("\\t"); break;
    case 0x08: sink.ascii("\\b"); break;
    case 0x0C: sink.ascii("\\f"); break;
    default: writeUnicodeEscape(sink, c);
  }
}

const HEX_DIGITS = "0123456789abcdef";

function writeUnicodeEscape(sink: ByteSink, unit: u32): void {
  sink.ascii("\\u");
  for (let shift = 12; shift >= 0; shift -= 4) {
    sink.byte(HEX_DIGITS.charCodeAt((unit >> shift) & 0xF));
  }
}
