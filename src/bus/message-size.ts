/**
 * What a message costs in memory, as the byte limits count it (mailboxes,
 * queued bytes, history, stream buffers). An estimate made without
 * serializing: the characters of every string (V8 keeps a one-byte string in
 * one byte per character; a message whose text needs two is undercounted by
 * at most half), eight bytes per number or boolean, and a fixed cost per
 * message and per object member for V8's headers and the message's fields.
 * A message is immutable once complete, so its figure is computed once.
 */
import type { Message } from './message.js';

/** The object headers, ids and timestamps of a message with empty content. */
export const MESSAGE_OVERHEAD_BYTES = 512;
/** A property slot plus its value's header. */
const MEMBER_OVERHEAD_BYTES = 16;
/** Deeper content than this is counted by its outer levels only; strict JSON input is far shallower. */
const MAX_DEPTH = 64;

const sizes = new WeakMap<Message, number>();

function valueBytes(value: unknown, depth: number): number {
  if (typeof value === 'string') return value.length;
  if (typeof value !== 'object' || value === null || depth > MAX_DEPTH) return 8;
  let total = MEMBER_OVERHEAD_BYTES;
  if (Array.isArray(value)) {
    for (const item of value as unknown[]) total += MEMBER_OVERHEAD_BYTES + valueBytes(item, depth + 1);
    return total;
  }
  for (const [key, item] of Object.entries(value)) total += MEMBER_OVERHEAD_BYTES + key.length + valueBytes(item, depth + 1);
  return total;
}

/** Bytes `message` holds, estimated as the module comment says. */
export function messageBytes(message: Message): number {
  const known = sizes.get(message);
  if (known !== undefined) return known;
  let total = MESSAGE_OVERHEAD_BYTES + message.sender.length + message.receiver.length + message.conversation_id.length;
  for (const field of [message.reply_with, message.in_reply_to, message.language, message.ontology, message.protocol]) {
    if (field !== undefined) total += field.length;
  }
  total += valueBytes(message.metadata, 0);
  if (message.content !== undefined) total += valueBytes(message.content, 0);
  sizes.set(message, total);
  return total;
}
