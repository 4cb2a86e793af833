// The svc agent SDK: write `onMessage((msg) => { reply("inform", msg.content); })`
// and `export { handle } from "../sdk"`; the ABI (docs/agent-abi.md) stays hidden.

import { ByteSink } from "./bytes";
import { Message, parseMessage, writeMessageLine } from "./message";
import { STDERR, STDIN, STDOUT, fillRandom, readAll, realtimeNs, writeAll } from "./wasi";
// Part of the program so that `--use abort=examples/sdk/abort/svcAbort` resolves.
export { svcAbort } from "./abort";

export { Message } from "./message";

export type Handler = (msg: Message) => void;

let handler: Handler | null = null;

/** Registers the function called for every delivered message (the last registration wins). */
export function onMessage(fn: Handler): void {
  handler = fn;
}

function dispatch(): void {
  const input = readAll(STDIN);
  if (input == null) {
    log("sdk: reading the incoming message failed");
    return;
  }
  const msg = parseMessage(input.ptr, input.len);
  input.free();
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
  // The examples build with --runtime minimal, whose collector only runs when asked.
  // Nothing on the stack is needed any more, so everything unreachable from globals
  // can go; with the other runtimes this is merely an early full cycle.
  __collect();
}

/**
 * Sends `msg` as one outgoing line on fd 1. An empty `receiver` makes it a reply to the
 * sender of the message being handled; empty conversation fields default from it.
 * False if the host refused the line.
 */
export function post(msg: Message): bool {
  const sink = new ByteSink();
  writeMessageLine(sink, msg);
  const ok = writeAll(STDOUT, sink.ptr, sink.len);
  sink.free();
  return ok;
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
  const sink = new ByteSink(<usize>text.length + 1);
  sink.text(text);
  sink.byte(0x0A);
  const ok = writeAll(STDERR, sink.ptr, sink.len);
  sink.free();
  return ok;
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
