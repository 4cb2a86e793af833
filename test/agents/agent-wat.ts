/**
 * Agents written in WAT for the agent tests, as an author writes them (no
 * `__svc_` exports: admission instruments them). Each replies, if at all, with
 * one line without `receiver`, so the reply goes back to the sender.
 */
import { wat } from '../helpers/wat.js';

const FD_READ = '(import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))';
const FD_WRITE = '(import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))';

/** Writes `len` bytes at `ptr` to fd 1 (iovec at 16, nwritten at 24). */
const WRITE_LINE = (ptr: string, len: string) => `
    (i32.store (i32.const 16) ${ptr})
    (i32.store (i32.const 20) ${len})
    (drop (call $fd_write (i32.const 1) (i32.const 16) (i32.const 1) (i32.const 24)))`;

/** Decimal digits of $v at $p; returns the address after the last digit. */
const ITOA = `
  (func $itoa (param $v i32) (param $p i32) (result i32)
    (local $div i32)
    (local.set $div (i32.const 1))
    (block $done
      (loop $up
        (br_if $done (i32.lt_u (local.get $v) (i32.mul (local.get $div) (i32.const 10))))
        (local.set $div (i32.mul (local.get $div) (i32.const 10)))
        (br $up)))
    (loop $emit
      (i32.store8 (local.get $p) (i32.add (i32.const 48) (i32.rem_u (i32.div_u (local.get $v) (local.get $div)) (i32.const 10))))
      (local.set $p (i32.add (local.get $p) (i32.const 1)))
      (local.set $div (i32.div_u (local.get $div) (i32.const 10)))
      (br_if $emit (local.get $div)))
    (local.get $p))`;

/** The 36-byte prefix of an `inform` reply whose content is a string, at 256; content goes from 292. */
const INFORM_PREFIX = '(data (i32.const 256) "{\\"message_type\\":\\"inform\\",\\"content\\":\\"")';

/** Replies `inform` `"<n>"`, where n is written at 292 by `body` and $p points past it. */
const REPLY_NUMBER = `
    (i32.store8 (local.get $p) (i32.const 34))
    (i32.store8 (i32.add (local.get $p) (i32.const 1)) (i32.const 125))
    (i32.store8 (i32.add (local.get $p) (i32.const 2)) (i32.const 10))
    ${WRITE_LINE('(i32.const 256)', '(i32.sub (i32.add (local.get $p) (i32.const 3)) (i32.const 256))')}`;

/**
 * Counts the messages it handled and replies the count ("1", "2", ...); the
 * count is a global, so it survives hibernation and is lost in a restart. A
 * message with a `!` anywhere in its JSON traps (`unreachable`): a crash on
 * demand.
 */
export const CRASHABLE_COUNTER = `(module
  ${FD_READ}
  ${FD_WRITE}
  (memory (export "memory") 1 1)
  (global $count (mut i32) (i32.const 0))
  ${INFORM_PREFIX}
  ${ITOA}
  (func (export "handle")
    (local $total i32) (local $n i32) (local $i i32) (local $p i32)
    (block $eof
      (loop $read
        (br_if $eof (i32.ge_u (local.get $total) (i32.const 60000)))
        (i32.store (i32.const 0) (i32.add (i32.const 1024) (local.get $total)))
        (i32.store (i32.const 4) (i32.sub (i32.const 60000) (local.get $total)))
        (drop (call $fd_read (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 8)))
        (local.set $n (i32.load (i32.const 8)))
        (br_if $eof (i32.eqz (local.get $n)))
        (local.set $total (i32.add (local.get $total) (local.get $n)))
        (br $read)))
    (block $scanned
      (loop $scan
        (br_if $scanned (i32.ge_u (local.get $i) (local.get $total)))
        (if (i32.eq (i32.load8_u (i32.add (i32.const 1024) (local.get $i))) (i32.const 33)) (then unreachable))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $scan)))
    (global.set $count (i32.add (global.get $count) (i32.const 1)))
    (local.set $p (call $itoa (global.get $count) (i32.const 292)))
    ${REPLY_NUMBER}))`;

/** Counts the messages it handled and replies the count, as CRASHABLE_COUNTER; its `at`th message traps (`unreachable`). */
export function crashingAt(at: number): string {
  return `(module
  ${FD_WRITE}
  (memory (export "memory") 1 1)
  (global $count (mut i32) (i32.const 0))
  ${INFORM_PREFIX}
  ${ITOA}
  (func (export "handle")
    (local $p i32)
    (global.set $count (i32.add (global.get $count) (i32.const 1)))
    (if (i32.eq (global.get $count) (i32.const ${at})) (then unreachable))
    (local.set $p (call $itoa (global.get $count) (i32.const 292)))
    ${REPLY_NUMBER}))`;
}

/** Spins `iterations` times per message, then replies `inform` "done": CPU on demand. */
export function burner(iterations: number): string {
  return `(module
  ${FD_WRITE}
  (memory (export "memory") 1 1)
  (global $sink (mut i32) (i32.const 0))
  (data (i32.const 256) "{\\"message_type\\":\\"inform\\",\\"content\\":\\"done\\"}\\n")
  (func (export "handle")
    (local $i i32)
    (loop $spin
      (global.set $sink (i32.add (global.get $sink) (i32.xor (local.get $i) (global.get $sink))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $spin (i32.lt_u (local.get $i) (i32.const ${iterations}))))
    ${WRITE_LINE('(i32.const 256)', '(i32.const 43)')}))`;
}

/** `_start` never returns (it spins; fuel or the watchdog ends it eventually). */
export const START_NEVER_RETURNS = `(module
  (memory (export "memory") 1 1)
  (global $spins (mut i64) (i64.const 0))
  (func (export "_start") (loop $spin (global.set $spins (i64.add (global.get $spins) (i64.const 1))) (br $spin)))
  (func (export "handle")))`;

/** A wasm start section that never returns, burning fuel: it runs out at startup. */
export const START_SECTION_SPINS = `(module
  (memory (export "memory") 1 1)
  (global $spins (mut i64) (i64.const 0))
  (func $spin (loop $again (global.set $spins (i64.add (global.get $spins) (i64.const 1))) (br $again)))
  (start $spin)
  (func (export "handle")))`;

/** `_initialize` traps: the module can never start. */
export const INITIALIZE_TRAPS = `(module
  (memory (export "memory") 1 1)
  (func (export "_initialize") unreachable)
  (func (export "handle")))`;

/**
 * Answers every message it gets, a platform `failure` included, with an `inform` reply; with its
 * first message it also sends a `request` to `nobody`, an unknown receiver, which brings it a failure.
 */
export const OBLIGING = `(module
  ${FD_WRITE}
  (memory (export "memory") 1 1)
  (global $first (mut i32) (i32.const 1))
  (data (i32.const 256) "{\\"receiver\\":\\"nobody\\",\\"message_type\\":\\"request\\"}\\n")
  (data (i32.const 512) "{\\"message_type\\":\\"inform\\",\\"content\\":\\"ok\\"}\\n")
  (func (export "handle")
    (if (global.get $first)
      (then
        (global.set $first (i32.const 0))
        ${WRITE_LINE('(i32.const 256)', '(i32.const 47)')}))
    ${WRITE_LINE('(i32.const 512)', '(i32.const 41)')}))`;

/** Writes one byte to fd `fd` and replies the errno it got as a number ("8" is EBADF). */
export function fdProbe(fd: number): string {
  return `(module
  ${FD_WRITE}
  (memory (export "memory") 1 1)
  ${INFORM_PREFIX}
  ${ITOA}
  (func (export "handle")
    (local $errno i32) (local $p i32)
    (i32.store8 (i32.const 100) (i32.const 120))
    (i32.store (i32.const 32) (i32.const 100))
    (i32.store (i32.const 36) (i32.const 1))
    (local.set $errno (call $fd_write (i32.const ${fd}) (i32.const 32) (i32.const 1) (i32.const 40)))
    (local.set $p (call $itoa (local.get $errno) (i32.const 292)))
    ${REPLY_NUMBER}))`;
}

/** Writes `bytes` bytes of one line to fd 1 in one call: past `max_disk_io_bytes` the execution fails. */
export function writer(bytes: number): string {
  const pages = Math.ceil((bytes + 1024) / 65_536);
  return `(module
  ${FD_WRITE}
  (memory (export "memory") ${pages} ${pages})
  (func (export "handle")
    ${WRITE_LINE('(i32.const 1024)', `(i32.const ${bytes})`)}))`;
}

/**
 * Declares `initial` and `maximum` pages; each message grows its memory one
 * page at a time until `memory.grow` returns -1, then replies the pages it
 * holds: where its maximum really is.
 */
export function grower(initial: number, maximum: number): string {
  return `(module
  ${FD_WRITE}
  (memory (export "memory") ${initial} ${maximum})
  ${INFORM_PREFIX}
  ${ITOA}
  (func (export "handle")
    (local $p i32)
    (block $full
      (loop $more
        (br_if $full (i32.eq (memory.grow (i32.const 1)) (i32.const -1)))
        (br $more)))
    (local.set $p (call $itoa (memory.size) (i32.const 292)))
    ${REPLY_NUMBER}))`;
}

/** A module whose only oddity is `imports` (WAT import lines); otherwise a valid agent. */
export function importing(...imports: string[]): string {
  return `(module ${imports.join(' ')} (memory (export "memory") 1 1) (func (export "handle")))`;
}

export const compile = (source: string, features: Parameters<typeof wat>[1] = {}) => wat(source, features);
