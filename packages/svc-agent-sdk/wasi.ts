// The five WASI preview 1 calls the svc agent ABI allows (docs/agent-abi.md).
// Signatures follow the WASI snapshot exactly: an errno (u16) comes back in an i32.

import { ByteSink } from "./bytes";

// @ts-ignore: decorator
@external("wasi_snapshot_preview1", "fd_read")
export declare function fd_read(fd: i32, iovs: usize, iovsLen: i32, nread: usize): i32;

// @ts-ignore: decorator
@external("wasi_snapshot_preview1", "fd_write")
export declare function fd_write(fd: i32, iovs: usize, iovsLen: i32, nwritten: usize): i32;

// @ts-ignore: decorator
@external("wasi_snapshot_preview1", "fd_close")
export declare function fd_close(fd: i32): i32;

// @ts-ignore: decorator
@external("wasi_snapshot_preview1", "clock_time_get")
export declare function clock_time_get(id: i32, precision: i64, time: usize): i32;

// @ts-ignore: decorator
@external("wasi_snapshot_preview1", "random_get")
export declare function random_get(buf: usize, len: i32): i32;

export const STDIN: i32 = 0;
export const STDOUT: i32 = 1;
export const STDERR: i32 = 2;
export const ERRNO_SUCCESS: i32 = 0;
export const CLOCK_REALTIME: i32 = 0;

// Static scratch cells, so that I/O (and abort in particular) never allocates.
const iovec = memory.data(8, 4);
const count = memory.data(8, 8);

// Room offered to each fd_read: most messages arrive in one call.
const READ_CHUNK: usize = 4096;

/** Writes `len` bytes at `ptr` to `fd`, retrying short writes. False if the host refused. */
export function writeAll(fd: i32, ptr: usize, len: usize): bool {
  while (len > 0) {
    store<u32>(iovec, <u32>ptr);
    store<u32>(iovec, <u32>len, 4);
    if (fd_write(fd, iovec, 1, count) != ERRNO_SUCCESS) return false;
    const written = <usize>load<u32>(count);
    if (written == 0) return false;
    ptr += written;
    len -= written;
  }
  return true;
}

/** Reads `fd` until EOF into `sink`, after what it already holds. False if the host reported an error. */
export function readAll(fd: i32, sink: ByteSink): bool {
  while (true) {
    sink.reserve(READ_CHUNK);
    store<u32>(iovec, <u32>(sink.ptr + sink.len));
    store<u32>(iovec, <u32>(sink.capacity - sink.len), 4);
    if (fd_read(fd, iovec, 1, count) != ERRNO_SUCCESS) return false;
    const got = <usize>load<u32>(count);
    if (got == 0) return true;
    sink.len += got;
  }
}

/** Nanoseconds since the Unix epoch, or 0 if the host has no clock. */
export function realtimeNs(): u64 {
  if (clock_time_get(CLOCK_REALTIME, 1000, count) != ERRNO_SUCCESS) return 0;
  return load<u64>(count);
}

/** Fills `len` bytes at `ptr` from the host's random source. */
export function fillRandom(ptr: usize, len: i32): bool {
  return random_get(ptr, len) == ERRNO_SUCCESS;
}
