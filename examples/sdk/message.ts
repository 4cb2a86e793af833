// The Message of the svc API (DESIGN.md section 3) and its JSON form.

import { ByteSink } from "./bytes";
import { JsonReader, JsonWriter } from "./json";

/**
 * A FIPA-ACL message. Absent and null fields are empty strings; a field that is not a
 * JSON string (say, a `content` object) holds its JSON text.
 */
export class Message {
  messageId: string = "";
  sender: string = "";
  receiver: string = "";
  /** The FIPA performative, e.g. "inform" or "request". */
  messageType: string = "";
  content: string = "";
  conversationId: string = "";
  replyWith: string = "";
  inReplyTo: string = "";
  language: string = "";
  ontology: string = "";
  protocol: string = "";
  /** Carries `traceparent` and `tracestate` among others. */
  metadata: Map<string, string> = new Map<string, string>();
  /** As the platform wrote it (RFC 3339 text). */
  createdAt: string = "";
}

/** Stores a top-level field; unknown keys are ignored. The API also accepts lowerCamelCase names. */
function assign(msg: Message, key: string, value: string): void {
  if (key == "message_id" || key == "messageId") msg.messageId = value;
  else if (key == "sender") msg.sender = value;
  else if (key == "receiver") msg.receiver = value;
  else if (key == "message_type" || key == "messageType") msg.messageType = value;
  else if (key == "content") msg.content = value;
  else if (key == "conversation_id" || key == "conversationId") msg.conversationId = value;
  else if (key == "reply_with" || key == "replyWith") msg.replyWith = value;
  else if (key == "in_reply_to" || key == "inReplyTo") msg.inReplyTo = value;
  else if (key == "language") msg.language = value;
  else if (key == "ontology") msg.ontology = value;
  else if (key == "protocol") msg.protocol = value;
  else if (key == "created_at" || key == "createdAt") msg.createdAt = value;
}

/** Reads `{"k": v, ...}` into `msg.metadata`; nested values are skipped. */
function readMetadata(reader: JsonReader, metadata: Map<string, string>): bool {
  if (!reader.accept(0x7B)) return reader.skipValue(); // null or a stray scalar: no metadata
  if (reader.accept(0x7D)) return true;
  do {
    const key = reader.readString();
    if (key == null || !reader.accept(0x3A)) return false;
    const next = reader.peek();
    if (next == 0x7B || next == 0x5B) {
      if (!reader.skipValue()) return false;
    } else {
      const value = reader.readText();
      if (value == null) return false;
      metadata.set(key, value);
    }
  } while (reader.accept(0x2C));
  return reader.accept(0x7D);
}

/** Parses one Message JSON document (UTF-8). Null if it is not a JSON object. */
export function parseMessage(ptr: usize, len: usize): Message | null {
  const reader = new JsonReader(ptr, len);
  const msg = new Message();
  if (!reader.accept(0x7B)) return null;
  if (reader.accept(0x7D)) return reader.atEnd() ? msg : null;
  do {
    const key = reader.readString();
    if (key == null || !reader.accept(0x3A)) return null;
    if (key == "metadata") {
      if (!readMetadata(reader, msg.metadata)) return null;
    } else {
      const value = reader.readText();
      if (value == null) return null;
      assign(msg, key, value);
    }
  } while (reader.accept(0x2C));
  return reader.accept(0x7D) && reader.atEnd() ? msg : null;
}

function optional(writer: JsonWriter, key: string, value: string): void {
  if (value.length > 0) writer.field(key, value);
}

/**
 * Appends `msg` as one line of JSON (snake_case keys, empty fields left out, so the
 * platform fills them in). `message_id`, `sender` and `created_at` are the platform's
 * to set and are never written.
 */
export function writeMessageLine(sink: ByteSink, msg: Message): void {
  const writer = new JsonWriter(sink);
  optional(writer, "receiver", msg.receiver);
  writer.field("message_type", msg.messageType);
  writer.field("content", msg.content);
  optional(writer, "conversation_id", msg.conversationId);
  optional(writer, "reply_with", msg.replyWith);
  optional(writer, "in_reply_to", msg.inReplyTo);
  optional(writer, "language", msg.language);
  optional(writer, "ontology", msg.ontology);
  optional(writer, "protocol", msg.protocol);
  if (msg.metadata.size > 0) {
    const nested = writer.object("metadata");
    const keys = msg.metadata.keys();
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      nested.field(key, msg.metadata.get(key));
    }
    nested.close();
  }
  writer.close();
  sink.byte(0x0A);
}
