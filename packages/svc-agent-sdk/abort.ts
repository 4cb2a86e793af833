// The ABI's abort: a line on fd 2, then a trap. Wired in with `--use abort=...`
// so that asc neither imports `env.abort` nor needs the WASI `proc_exit`.
// It must not allocate: it also runs when the heap is what failed.

import { STDERR, writeAll } from "./wasi";

const CHUNK: usize = 256;
const chunk = memory.data(<i32>CHUNK);
let used: usize = 0;
let aborting = false;

function flush(): void {
  writeAll(STDERR, chunk, used);
  used = 0;
}

function put(b: u32): void {
  if (used == CHUNK) flush();
  store<u8>(chunk + used++, <u8>b);
}

/** Writes the string as UTF-8; surrogate pairs are joined, lone ones become U+FFFD. */
function putString(text: string): void {
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
    if (cp == 0x0A) cp = 0x20; // one abort, one log line
    if (cp < 0x80) {
      put(cp);
    } else if (cp < 0x800) {
      put(0xC0 | (cp >> 6));
      put(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      put(0xE0 | (cp >> 12));
      put(0x80 | ((cp >> 6) & 0x3F));
      put(0x80 | (cp & 0x3F));
    } else {
      put(0xF0 | (cp >> 18));
      put(0x80 | ((cp >> 12) & 0x3F));
      put(0x80 | ((cp >> 6) & 0x3F));
      put(0x80 | (cp & 0x3F));
    }
  }
}

function putDecimal(value: u32): void {
  let divisor: u32 = 1;
  while (value / divisor >= 10) divisor *= 10;
  while (divisor > 0) {
    put(0x30 + (value / divisor) % 10);
    divisor /= 10;
  }
}

/** Replaces the global `abort`: writes "abort: <message> at <file>:<line>:<column>" to fd 2, then traps. */
export function svcAbort(message: string | null = null, fileName: string | null = null, lineNumber: u32 = 0, columnNumber: u32 = 0): void {
  // A second abort while reporting the first (say, a bad pointer in the message) just traps.
  if (!aborting) {
    aborting = true;
    putString("abort: ");
    putString(message != null ? message : "(no message)");
    if (fileName != null) {
      putString(" at ");
      putString(fileName);
      put(0x3A);
      putDecimal(lineNumber);
      put(0x3A);
      putDecimal(columnNumber);
    }
    put(0x0A);
    flush();
  }
  unreachable();
}
