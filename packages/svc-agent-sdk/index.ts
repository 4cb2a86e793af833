// The svc agent SDK: write `onMessage((msg) => { reply("inform", msg.content); })`
// and `export { handle } from "svc-agent-sdk"`; the ABI (docs/agent-abi.md) stays hidden.

import { ByteSink } from "./bytes";
import { Message, parseMessage, writeMessageLine } from "./message";
import { STDERR, STDIN, STDOUT, fillRandom, readAll, realtimeNs, writeAll } from "./wasi";
// Part of the program so that `--use abort=~lib/svc-agent-sdk/abort/svcAbort` resolves.
export { svcAbort } from "./abort";

export { Message } from "./message";

export type Handler = (msg: Message) => void;

let handler: Handler | null = null;

// Buffers reused by every message: the incoming bytes, and each line written.
const input = new ByteSink();
const line = new ByteSink();

/*
 * The collector (`--runtime minimal`) runs only when asked. Run after every message it
 * took a sixth of the time of a small one (0.6 of 3.7 µs), so it is deferred while little
 * garbage can have built up: it runs after 16 messages or 16 KiB read and written,
 * whichever comes first. Once memory has grown past its size at the first message, it
 * runs after every message, as memory is what such an agent is short of.
 */
const COLLECT_EVERY_MESSAGES: i32 = 16;
const COLLECT_AFTER_BYTES: usize = 16 * 1024;
let messagesSinceCollect: i32 = 0;
let bytesSinceCollect: usize = 0;
let pagesAtFirstMessage: i32 = -1;

/** Registers the function called for every delivered message (the last registration wins). */
export function onMessage(fn: Handler): void {
  handler = fn;
}

function dispatch(): void {
  const read = readAll(STDIN, input);
  bytesSinceCollect += input.len;
  if (!read) {
    log("sdk: reading the incoming message failed");
    return;
  }
  const msg = parseMessage(input.ptr, input.len);
  // The message is copied out of the raw bytes: a large buffer is freed now, before the
  // handler allocates its reply, which can then reuse the block.
  input.clear();
  if (msg == null) {
    log("sdk: the incoming message is not a JSON object");
    return;
  }
  const fn = handler;
  if (fn == null) {
    log("sdk: no onMessage handler registered");
    return;
  }
  fn(msg);
}

/**
 * The ABI entry point, called once per delivered message: reads the Message JSON
 * from fd 0 and passes it to the registered handler.
 */
export function handle(): void {
  dispatch();
  const pages = memory.size();
  if (++messagesSinceCollect < COLLECT_EVERY_MESSAGES && bytesSinceCollect < COLLECT_AFTER_BYTES && pages <= pagesAtFirstMessage) return;
  // Nothing on the stack is needed any more, so everything unreachable from globals can
  // go; with the other runtimes this is merely an early full cycle.
  __collect();
  messagesSinceCollect = 0;
  bytesSinceCollect = 0;
  if (pagesAtFirstMessage < 0) pagesAtFirstMessage = pages;
}

/** Writes the line in `line` to `fd`; false if the host refused it. */
function writeLine(fd: i32): bool {
  bytesSinceCollect += line.len;
  const ok = writeAll(fd, line.ptr, line.len);
  line.clear();
  return ok;
}

/**
 * Sends `msg` as one outgoing line on fd 1. An empty `receiver` makes it a reply to the
 * sender of the message being handled; empty conversation fields default from it.
 * False if the host refused the line.
 */
export function post(msg: Message): bool {
  writeMessageLine(line, msg);
  return writeLine(STDOUT);
}

/** Replies to the sender of the message being handled. */
export function reply(messageType: string, content: string): bool {
  const msg = new Message();
  msg.messageType = messageType;
  msg.content = content;
  return post(msg);
}

/** Sends a new message to the agent `receiver`. */
export function send(receiver: string, messageType: string, content: string): bool {
  const msg = new Message();
  msg.receiver = receiver;
  msg.messageType = messageType;
  msg.content = content;
  return post(msg);
}

/** Writes `text` and a newline to fd 2; the server logs each line with the agent's id. */
export function log(text: string): bool {
  line.text(text);
  line.byte(0x0A);
  return writeLine(STDERR);
}

/** Wall-clock time in nanoseconds since the Unix epoch. */
export function now(): u64 {
  return realtimeNs();
}

const randomCell = memory.data(4, 4);

/** A random 32-bit number from the host's random source. */
export function randomU32(): u32 {
  if (!fillRandom(randomCell, 4)) abort("random_get failed");
  return load<u32>(randomCell);
}
