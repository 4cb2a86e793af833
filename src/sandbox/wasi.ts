/**
 * The five WASI preview 1 calls of the agent ABI (DESIGN.md section 2),
 * written here instead of using `node:wasi`, which is not a sandbox (an
 * agent's `fd_close(1)` closed the server's stdout).
 *
 * One shim, and so one imports object, serves every instance in a worker:
 * the host functions read "the current execution" (memory, fd table, input,
 * output sinks) that `begin` points them at. Instantiation then needs no new
 * closures, which keeps it near 20 µs.
 */
import { randomFillSync } from 'node:crypto';
import type { OutputLimits } from './types.js';

/** WASI preview 1 errno values used by the shim. */
export const ERRNO = {
  SUCCESS: 0,
  BADF: 8,
  FAULT: 21,
  FBIG: 22,
  INVAL: 28,
} as const;

export const CLOCK_REALTIME = 0;
export const CLOCK_MONOTONIC = 1;

/** `random_get` fills at most this much per call: one host call costs one unit of fuel, so it must stay cheap. */
export const MAX_RANDOM_BYTES = 64 * 1024;

const STDIN = 0;
const STDOUT = 1;
const STDERR = 2;
const IOVEC_BYTES = 8;
const NEWLINE = 0x0a;
const EMPTY = new Uint8Array(0);
const EMPTY_BUFFER = Buffer.alloc(0);
const EMPTY_VIEW = new DataView(EMPTY.buffer);

/** Per-instance descriptor table: fds 0, 1, 2 exist; `fd_close` marks them closed for that instance only. */
export interface FdTable {
  closed: number;
}

export function createFdTable(): FdTable {
  return { closed: 0 };
}

function isOpen(fds: FdTable, fd: number): boolean {
  return fd >= STDIN && fd <= STDERR && (fds.closed & (1 << fd)) === 0;
}

/** Thrown out of a host function to stop an execution at once when it passes an output cap. */
export class OutputLimitExceeded extends Error {
  override readonly name = 'OutputLimitExceeded';
}

export interface WasiOutput {
  stdout: string[];
  stderr: string[];
  /** Set when the execution passed an output cap; the execution has failed. */
  failure: 'output_limit' | null;
  message: string;
}

/** Raw calls with WASI signatures, returning an errno; exposed for tests. */
export interface WasiCalls {
  fd_read(fd: number, iovs: number, iovsLen: number, nreadPtr: number): number;
  fd_write(fd: number, iovs: number, iovsLen: number, nwrittenPtr: number): number;
  fd_close(fd: number): number;
  clock_time_get(id: number, precision: bigint, timePtr: number): number;
  random_get(buf: number, len: number): number;
}

export interface WasiShim {
  /** `{ wasi_snapshot_preview1: ... }`, the same object for every instance. */
  readonly imports: WebAssembly.Imports;
  readonly calls: WasiCalls;
  /** Points the shim at one execution. `memory` is null while a wasm start section runs (exports unknown yet). */
  begin(memory: WebAssembly.Memory | null, fds: FdTable, input: Uint8Array): void;
  attachMemory(memory: WebAssembly.Memory): void;
  /** Flushes partial last lines and detaches the shim from the execution. */
  end(): WasiOutput;
}

/**
 * A line's text: UTF-8 with U+FFFD for what is not, and a leading byte order mark
 * dropped (what a `TextDecoder` gives). `Buffer#toString` makes the string straight
 * from the agent's memory, where a `TextDecoder` needs a view object made first: it
 * is faster, and every message an agent sends is decoded here.
 */
function decodeLine(bytes: Buffer, start: number, end: number): string {
  const from = end - start >= 3 && bytes[start] === 0xef && bytes[start + 1] === 0xbb && bytes[start + 2] === 0xbf ? start + 3 : start;
  return bytes.toString('utf8', from, end);
}

/** Splits a byte stream into lines; holds the partial last line until more bytes or `flush`. */
class LineSink {
  lines: string[] = [];
  private pending: Uint8Array[] = [];

  /** Takes the lines in `bytes`, a view of the agent's memory: a partial last line is copied, as the agent may reuse its buffer. */
  write(bytes: Buffer): void {
    let start = 0;
    for (let nl = bytes.indexOf(NEWLINE); nl !== -1; nl = bytes.indexOf(NEWLINE, start)) {
      if (this.pending.length === 0) this.lines.push(decodeLine(bytes, start, nl));
      else {
        this.pending.push(bytes.subarray(start, nl));
        this.emit();
      }
      start = nl + 1;
    }
    if (start < bytes.length) this.pending.push(new Uint8Array(bytes.subarray(start)));
  }

  get hasPartial(): boolean {
    return this.pending.length > 0;
  }

  flush(): void {
    if (this.pending.length > 0) this.emit();
  }

  reset(): void {
    this.lines = [];
    this.pending = [];
  }

  private emit(): void {
    const whole = Buffer.concat(this.pending);
    this.pending = [];
    this.lines.push(decodeLine(whole, 0, whole.length));
  }
}

function countNewlines(bytes: Uint8Array): number {
  let n = 0;
  for (let i = bytes.indexOf(NEWLINE); i !== -1; i = bytes.indexOf(NEWLINE, i + 1)) n++;
  return n;
}

function realtimeNs(): bigint {
  const ms = performance.timeOrigin + performance.now();
  return BigInt(Math.floor(ms)) * 1_000_000n + BigInt(Math.floor((ms % 1) * 1_000_000));
}

export function createWasiShim(limits: OutputLimits): WasiShim {
  let memory: WebAssembly.Memory | null = null;
  let fds: FdTable = createFdTable();
  let input: Uint8Array = EMPTY;
  let inputOffset = 0;
  let stdoutBytes = 0;
  let stderrBytes = 0;
  let messages = 0;
  let failure: WasiOutput['failure'] = null;
  let failureMessage = '';
  const stdout = new LineSink();
  const stderr = new LineSink();

  // Views over the current memory's buffer, made on first use rather than on every call (reading
  // `memory.buffer` is not free). memory.grow detaches that buffer, which empties the views.
  let bytes = EMPTY_BUFFER;
  let data = EMPTY_VIEW;

  function dropViews(): void {
    bytes = EMPTY_BUFFER;
    data = EMPTY_VIEW;
  }

  /** Whether [ptr, ptr + len) lies inside the current memory; keeps `bytes` and `data` on it. */
  function inBounds(ptr: number, len: number): boolean {
    if (memory === null) return false;
    if (bytes.byteLength === 0 || ptr + len > bytes.byteLength) {
      const buffer = memory.buffer;
      bytes = Buffer.from(buffer);
      data = new DataView(buffer);
    }
    return ptr + len <= bytes.byteLength;
  }

  /** Whether the iovec array and every buffer it names lie inside memory (checked before any side effect). */
  function iovecsInBounds(iovs: number, iovsLen: number): boolean {
    if (!inBounds(iovs, iovsLen * IOVEC_BYTES)) return false;
    for (let at = iovs, end = iovs + iovsLen * IOVEC_BYTES; at < end; at += IOVEC_BYTES) {
      if (data.getUint32(at, true) + data.getUint32(at + 4, true) > bytes.byteLength) return false;
    }
    return true;
  }

  function fail(message: string): number {
    failure = 'output_limit';
    failureMessage = message;
    return ERRNO.FBIG;
  }

  /** Applies the caps before accepting `bytes` (a view of memory); returns an errno when they would be passed. */
  function accept(fd: number, bytes: Buffer): number {
    if (fd === STDOUT) {
      if (stdoutBytes + bytes.length > limits.maxOutputBytes) return fail(`more than ${limits.maxOutputBytes} output bytes`);
      const lines = countNewlines(bytes);
      if (messages + lines > limits.maxOutputMessages) return fail(`more than ${limits.maxOutputMessages} output messages`);
      stdoutBytes += bytes.length;
      messages += lines;
      stdout.write(bytes);
    } else {
      if (stderrBytes + bytes.length > limits.maxLogBytes) return fail(`more than ${limits.maxLogBytes} log bytes`);
      stderrBytes += bytes.length;
      stderr.write(bytes);
    }
    return ERRNO.SUCCESS;
  }

  const calls: WasiCalls = {
    fd_read(fd, iovsArg, iovsLenArg, nreadArg) {
      const iovs = iovsArg >>> 0;
      const iovsLen = iovsLenArg >>> 0;
      const nreadPtr = nreadArg >>> 0;
      if (fd !== STDIN || !isOpen(fds, fd)) return ERRNO.BADF;
      if (!iovecsInBounds(iovs, iovsLen) || !inBounds(nreadPtr, 4)) return ERRNO.FAULT;
      let nread = 0;
      for (let at = iovs, end = iovs + iovsLen * IOVEC_BYTES; at < end && inputOffset < input.length; at += IOVEC_BYTES) {
        const len = data.getUint32(at + 4, true);
        const chunk = input.subarray(inputOffset, inputOffset + len);
        bytes.set(chunk, data.getUint32(at, true));
        inputOffset += chunk.length;
        nread += chunk.length;
        if (chunk.length < len) break;
      }
      data.setUint32(nreadPtr, nread, true);
      return ERRNO.SUCCESS;
    },

    fd_write(fd, iovsArg, iovsLenArg, nwrittenArg) {
      const iovs = iovsArg >>> 0;
      const iovsLen = iovsLenArg >>> 0;
      const nwrittenPtr = nwrittenArg >>> 0;
      if ((fd !== STDOUT && fd !== STDERR) || !isOpen(fds, fd)) return ERRNO.BADF;
      if (failure !== null) return ERRNO.FBIG;
      if (!iovecsInBounds(iovs, iovsLen) || !inBounds(nwrittenPtr, 4)) return ERRNO.FAULT;
      let written = 0;
      for (let at = iovs, end = iovs + iovsLen * IOVEC_BYTES; at < end; at += IOVEC_BYTES) {
        const ptr = data.getUint32(at, true);
        const len = data.getUint32(at + 4, true);
        if (len === 0) continue;
        const errno = accept(fd, bytes.subarray(ptr, ptr + len));
        if (errno !== ERRNO.SUCCESS) return errno;
        written += len;
      }
      data.setUint32(nwrittenPtr, written, true);
      return ERRNO.SUCCESS;
    },

    fd_close(fd) {
      if (!isOpen(fds, fd)) return ERRNO.BADF;
      fds.closed |= 1 << fd;
      return ERRNO.SUCCESS;
    },

    clock_time_get(id, _precision, timeArg) {
      const timePtr = timeArg >>> 0;
      let now: bigint;
      if (id === CLOCK_REALTIME) now = realtimeNs();
      else if (id === CLOCK_MONOTONIC) now = process.hrtime.bigint();
      else return ERRNO.INVAL;
      if (!inBounds(timePtr, 8)) return ERRNO.FAULT;
      data.setBigUint64(timePtr, now, true);
      return ERRNO.SUCCESS;
    },

    random_get(bufArg, lenArg) {
      const buf = bufArg >>> 0;
      const len = lenArg >>> 0;
      if (len > MAX_RANDOM_BYTES) return ERRNO.INVAL;
      if (!inBounds(buf, len)) return ERRNO.FAULT;
      randomFillSync(bytes, buf, len);
      return ERRNO.SUCCESS;
    },
  };

  /** A failed cap returns FBIG above; the import then traps so the execution stops at once. */
  function fdWriteChecked(fd: number, iovs: number, iovsLen: number, nwrittenPtr: number): number {
    const errno = calls.fd_write(fd, iovs, iovsLen, nwrittenPtr);
    if (failure !== null) throw new OutputLimitExceeded(failureMessage);
    return errno;
  }

  const imports: WebAssembly.Imports = {
    wasi_snapshot_preview1: {
      fd_read: calls.fd_read,
      fd_write: fdWriteChecked,
      fd_close: calls.fd_close,
      clock_time_get: calls.clock_time_get,
      random_get: calls.random_get,
    },
  };

  return {
    imports,
    calls,
    begin(nextMemory, nextFds, nextInput) {
      memory = nextMemory;
      dropViews();
      fds = nextFds;
      input = nextInput;
      inputOffset = 0;
      stdoutBytes = 0;
      stderrBytes = 0;
      messages = 0;
      failure = null;
      failureMessage = '';
      stdout.reset();
      stderr.reset();
    },
    attachMemory(nextMemory) {
      memory = nextMemory;
      dropViews();
    },
    end() {
      if (stdout.hasPartial && failure === null) {
        if (messages + 1 > limits.maxOutputMessages) fail(`more than ${limits.maxOutputMessages} output messages`);
        else stdout.flush();
      }
      stderr.flush();
      const out: WasiOutput = { stdout: stdout.lines, stderr: stderr.lines, failure, message: failureMessage };
      // Dropped so a discarded instance's memory is not kept alive by the shim.
      memory = null;
      dropViews();
      input = EMPTY;
      stdout.reset();
      stderr.reset();
      return out;
    },
  };
}
