/**
 * The five WASI calls, driven directly against a `WebAssembly.Memory` (no
 * agent code runs here): every errno path, line splitting and the caps.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  CLOCK_MONOTONIC,
  CLOCK_REALTIME,
  ERRNO,
  MAX_RANDOM_BYTES,
  OutputLimitExceeded,
  createFdTable,
  createWasiShim,
  type WasiShim,
} from '../../src/sandbox/wasi.js';
import type { OutputLimits } from '../../src/sandbox/types.js';

const LIMITS: OutputLimits = { maxOutputBytes: 64, maxOutputMessages: 3, maxLogBytes: 32 };
const PAGE = 65_536;
/** Scratch layout: iovecs at 0.., result cell at 100, data at 1000. */
const IOVS = 0;
const RESULT = 100;
const DATA = 1000;
const text = new TextEncoder();

function setup(input = '', limits = LIMITS): { shim: WasiShim; memory: WebAssembly.Memory; view: DataView; bytes: Uint8Array } {
  const shim = createWasiShim(limits);
  const memory = new WebAssembly.Memory({ initial: 1, maximum: 2 });
  shim.begin(memory, createFdTable(), text.encode(input));
  return { shim, memory, view: new DataView(memory.buffer), bytes: new Uint8Array(memory.buffer) };
}

/** Writes iovecs [ptr, len] at `IOVS`. */
function iovecs(view: DataView, ...vecs: Array<[number, number]>): void {
  vecs.forEach(([ptr, len], i) => {
    view.setUint32(IOVS + i * 8, ptr, true);
    view.setUint32(IOVS + i * 8 + 4, len, true);
  });
}

function write(env: ReturnType<typeof setup>, fd: number, data: string): number {
  const encoded = text.encode(data);
  env.bytes.set(encoded, DATA);
  iovecs(env.view, [DATA, encoded.length]);
  return env.shim.calls.fd_write(fd, IOVS, 1, RESULT);
}

test('fd_read yields the incoming message across iovecs, then EOF', () => {
  const env = setup('{"hello":"world"}');
  iovecs(env.view, [DATA, 5], [DATA + 100, 4]);
  assert.equal(env.shim.calls.fd_read(0, IOVS, 2, RESULT), ERRNO.SUCCESS);
  assert.equal(env.view.getUint32(RESULT, true), 9);
  assert.equal(Buffer.from(env.bytes.subarray(DATA, DATA + 5)).toString(), '{"hel');
  assert.equal(Buffer.from(env.bytes.subarray(DATA + 100, DATA + 104)).toString(), 'lo":');
  iovecs(env.view, [DATA, 100]);
  assert.equal(env.shim.calls.fd_read(0, IOVS, 1, RESULT), ERRNO.SUCCESS);
  assert.equal(env.view.getUint32(RESULT, true), 8);
  assert.equal(env.shim.calls.fd_read(0, IOVS, 1, RESULT), ERRNO.SUCCESS);
  assert.equal(env.view.getUint32(RESULT, true), 0, 'EOF');
});

test('fd_read: EBADF for any fd but an open 0', () => {
  const env = setup('x');
  iovecs(env.view, [DATA, 10]);
  for (const fd of [1, 2, 3, -1, 0x7fffffff]) assert.equal(env.shim.calls.fd_read(fd, IOVS, 1, RESULT), ERRNO.BADF, `fd ${fd}`);
  assert.equal(env.shim.calls.fd_close(0), ERRNO.SUCCESS);
  assert.equal(env.shim.calls.fd_read(0, IOVS, 1, RESULT), ERRNO.BADF);
});

test('fd_read: EFAULT for the iovec array, a buffer or nread outside memory, with nothing read', () => {
  const env = setup('abc');
  iovecs(env.view, [DATA, 10]);
  assert.equal(env.shim.calls.fd_read(0, PAGE - 4, 1, RESULT), ERRNO.FAULT, 'iovec array crosses the end');
  assert.equal(env.shim.calls.fd_read(0, -16, 1, RESULT), ERRNO.FAULT, 'pointer above 2 GiB (negative i32)');
  assert.equal(env.shim.calls.fd_read(0, IOVS, 0x20000000, RESULT), ERRNO.FAULT, 'huge iovs_len');
  assert.equal(env.shim.calls.fd_read(0, IOVS, 1, PAGE - 2), ERRNO.FAULT, 'nread crosses the end');
  iovecs(env.view, [PAGE - 5, 10]);
  assert.equal(env.shim.calls.fd_read(0, IOVS, 1, RESULT), ERRNO.FAULT, 'buffer crosses the end');
  iovecs(env.view, [DATA, 10]);
  assert.equal(env.shim.calls.fd_read(0, IOVS, 1, RESULT), ERRNO.SUCCESS);
  assert.equal(env.view.getUint32(RESULT, true), 3, 'the faults consumed no input');
});

test('without a memory (a wasm start section runs) every pointer is EFAULT', () => {
  const shim = createWasiShim(LIMITS);
  shim.begin(null, createFdTable(), new Uint8Array(0));
  assert.equal(shim.calls.fd_read(0, 0, 0, 0), ERRNO.FAULT);
  assert.equal(shim.calls.fd_write(1, 0, 0, 0), ERRNO.FAULT);
  assert.equal(shim.calls.clock_time_get(CLOCK_MONOTONIC, 0n, 0), ERRNO.FAULT);
  assert.equal(shim.calls.random_get(0, 0), ERRNO.FAULT);
  assert.equal(shim.calls.fd_close(2), ERRNO.SUCCESS);
});

test('fd_write splits fd 1 into message lines and fd 2 into log lines; a partial last line is flushed at the end', () => {
  const env = setup();
  assert.equal(write(env, 1, '{"a":1}\n{"b"'), ERRNO.SUCCESS);
  assert.equal(env.view.getUint32(RESULT, true), 12);
  assert.equal(write(env, 1, ':2}\n{"c":3}'), ERRNO.SUCCESS);
  assert.equal(write(env, 2, 'log one\nlog'), ERRNO.SUCCESS);
  assert.equal(write(env, 2, ' two ü'), ERRNO.SUCCESS);
  const out = env.shim.end();
  assert.deepEqual(out.stdout, ['{"a":1}', '{"b":2}', '{"c":3}']);
  assert.deepEqual(out.stderr, ['log one', 'log two ü']);
  assert.equal(out.failure, null);
});

test('fd_write gathers several iovecs; zero-length ones are skipped', () => {
  const env = setup();
  env.bytes.set(text.encode('hello'), DATA);
  env.bytes.set(text.encode(' world\n'), DATA + 50);
  iovecs(env.view, [DATA, 5], [DATA + 10, 0], [DATA + 50, 7]);
  assert.equal(env.shim.calls.fd_write(1, IOVS, 3, RESULT), ERRNO.SUCCESS);
  assert.equal(env.view.getUint32(RESULT, true), 12);
  assert.deepEqual(env.shim.end().stdout, ['hello world']);
});

test('fd_write: EBADF for fd 0, unknown fds and closed fds; EFAULT for pointers outside memory', () => {
  const env = setup();
  for (const fd of [0, 3, -1]) assert.equal(write(env, fd, 'x\n'), ERRNO.BADF, `fd ${fd}`);
  iovecs(env.view, [PAGE - 1, 2]);
  assert.equal(env.shim.calls.fd_write(1, IOVS, 1, RESULT), ERRNO.FAULT, 'buffer crosses the end');
  iovecs(env.view, [DATA, 1]);
  assert.equal(env.shim.calls.fd_write(1, -8, 1, RESULT), ERRNO.FAULT, 'iovec array outside');
  assert.equal(env.shim.calls.fd_write(1, IOVS, 1, PAGE), ERRNO.FAULT, 'nwritten outside');
  assert.equal(env.shim.calls.fd_close(1), ERRNO.SUCCESS);
  assert.equal(write(env, 1, 'x\n'), ERRNO.BADF);
  assert.equal(write(env, 2, 'still open\n'), ERRNO.SUCCESS);
  assert.deepEqual(env.shim.end(), { stdout: [], stderr: ['still open'], failure: null, message: '' });
});

test('fd_write checks pointers against the current memory after memory.grow', () => {
  const env = setup();
  // A call before the growth, so the shim holds views of the memory as it was.
  assert.equal(write(env, 1, 'before\n'), ERRNO.SUCCESS);
  env.memory.grow(1);
  const view = new DataView(env.memory.buffer);
  new Uint8Array(env.memory.buffer).set(text.encode('grown\n'), PAGE + 10);
  view.setUint32(IOVS, PAGE + 10, true);
  view.setUint32(IOVS + 4, 6, true);
  assert.equal(env.shim.calls.fd_write(1, IOVS, 1, RESULT), ERRNO.SUCCESS);
  assert.equal(view.getUint32(RESULT, true), 6);
  assert.deepEqual(env.shim.end().stdout, ['before', 'grown']);
});

test('fd_close closes 0, 1 and 2 once, per fd table; anything else is EBADF', () => {
  const shim = createWasiShim(LIMITS);
  const memory = new WebAssembly.Memory({ initial: 1 });
  const closedTable = createFdTable();
  shim.begin(memory, closedTable, new Uint8Array(0));
  for (const fd of [0, 1, 2]) assert.equal(shim.calls.fd_close(fd), ERRNO.SUCCESS);
  for (const fd of [0, 1, 2, 3, -1, 1 << 30]) assert.equal(shim.calls.fd_close(fd), ERRNO.BADF, `fd ${fd}`);
  shim.end();
  // The same shim on another instance's table: its descriptors are untouched.
  shim.begin(memory, createFdTable(), new Uint8Array(0));
  assert.equal(shim.calls.fd_close(1), ERRNO.SUCCESS);
  shim.end();
  // And the first table stays closed across executions.
  shim.begin(memory, closedTable, new Uint8Array(0));
  assert.equal(shim.calls.fd_close(1), ERRNO.BADF);
});

test('clock_time_get returns real realtime and monotonic nanoseconds; other clocks are EINVAL', () => {
  const env = setup();
  assert.equal(env.shim.calls.clock_time_get(CLOCK_REALTIME, 1n, RESULT), ERRNO.SUCCESS);
  const realtime = env.view.getBigUint64(RESULT, true);
  assert.ok(Math.abs(Number(realtime / 1_000_000n) - Date.now()) < 1_000, `${realtime}`);
  assert.equal(env.shim.calls.clock_time_get(CLOCK_MONOTONIC, 1n, RESULT), ERRNO.SUCCESS);
  const first = env.view.getBigUint64(RESULT, true);
  assert.equal(env.shim.calls.clock_time_get(CLOCK_MONOTONIC, 1n, RESULT), ERRNO.SUCCESS);
  assert.ok(env.view.getBigUint64(RESULT, true) >= first);
  for (const id of [2, 3, 4, -1]) assert.equal(env.shim.calls.clock_time_get(id, 0n, RESULT), ERRNO.INVAL, `clock ${id}`);
  assert.equal(env.shim.calls.clock_time_get(CLOCK_REALTIME, 0n, PAGE - 4), ERRNO.FAULT);
});

test('random_get fills with real random bytes, bounded in length and in memory', () => {
  const env = setup();
  assert.equal(env.shim.calls.random_get(DATA, 64), ERRNO.SUCCESS);
  const first = Buffer.from(env.bytes.subarray(DATA, DATA + 64));
  assert.notDeepEqual(first, Buffer.alloc(64));
  assert.equal(env.shim.calls.random_get(DATA, 64), ERRNO.SUCCESS);
  assert.notDeepEqual(Buffer.from(env.bytes.subarray(DATA, DATA + 64)), first);
  assert.equal(env.shim.calls.random_get(DATA, 0), ERRNO.SUCCESS);
  assert.equal(env.shim.calls.random_get(0, MAX_RANDOM_BYTES + 1), ERRNO.INVAL);
  assert.equal(env.shim.calls.random_get(PAGE - 10, 11), ERRNO.FAULT);
  assert.equal(env.shim.calls.random_get(-1, 1), ERRNO.FAULT);
});

test('past the output byte cap fd_write returns EFBIG, marks output_limit, and the import traps', () => {
  const env = setup();
  assert.equal(write(env, 1, 'x'.repeat(60)), ERRNO.SUCCESS);
  assert.equal(write(env, 1, 'y'.repeat(5)), ERRNO.FBIG);
  assert.equal(write(env, 1, 'z'), ERRNO.FBIG, 'stays failed');
  const out = env.shim.end();
  assert.equal(out.failure, 'output_limit');
  assert.match(out.message, /64 output bytes/);

  const again = setup();
  const fdWrite = again.shim.imports['wasi_snapshot_preview1']!['fd_write'] as (...args: number[]) => number;
  again.bytes.set(text.encode('x'.repeat(65)), DATA);
  iovecs(again.view, [DATA, 65]);
  assert.throws(() => fdWrite(1, IOVS, 1, RESULT), OutputLimitExceeded);
});

test('past the message cap, or the log cap, the execution fails with output_limit', () => {
  const lines = setup();
  assert.equal(write(lines, 1, '1\n2\n3\n'), ERRNO.SUCCESS);
  assert.equal(write(lines, 1, '4\n'), ERRNO.FBIG);
  assert.match(lines.shim.end().message, /3 output messages/);

  const partial = setup();
  assert.equal(write(partial, 1, '1\n2\n3\n4'), ERRNO.SUCCESS, 'a partial line is not a message yet');
  const out = partial.shim.end();
  assert.equal(out.failure, 'output_limit', 'but it is when flushed at the end');

  const logs = setup();
  assert.equal(write(logs, 2, 'l'.repeat(32)), ERRNO.SUCCESS);
  assert.equal(write(logs, 2, 'l'), ERRNO.FBIG);
  assert.match(logs.shim.end().message, /32 log bytes/);
});

test('begin starts every execution afresh: input, caps and lines', () => {
  const env = setup('first');
  assert.equal(write(env, 1, '1\n2\n3\n'), ERRNO.SUCCESS);
  env.shim.end();
  env.shim.begin(env.memory, createFdTable(), text.encode('second'));
  assert.equal(write(env, 1, '4\n'), ERRNO.SUCCESS);
  iovecs(env.view, [DATA, 100]);
  assert.equal(env.shim.calls.fd_read(0, IOVS, 1, RESULT), ERRNO.SUCCESS);
  assert.equal(env.view.getUint32(RESULT, true), 6);
  assert.deepEqual(env.shim.end().stdout, ['4']);
});
