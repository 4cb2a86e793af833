// The Message of the svc API (DESIGN.md section 3) and its JSON form.

import { ByteSink } from "./bytes";
import { BAD_KEY, JsonReader, writeJsonField, writeJsonKey } from "./json";

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
  /** As the platform wrote it (RFC 3339 text). */
  createdAt: string = "";
  // Most messages carry no metadata, and most agents never read the metadata they get
  // (with tracing on, every message carries a `traceparent`): the map is made when first
  // used, from the object's JSON text kept at parse time.
  private entries: Map<string, string> | null = null;
  private metadataJson: ArrayBuffer | null = null;

  /** Carries `traceparent` and `tracestate` among others. */
  get metadata(): Map<string, string> {
    let entries = this.entries;
    if (entries == null) {
      entries = new Map<string, string>();
      this.entries = entries;
      const json = this.metadataJson;
      if (json != null) {
        this.metadataJson = null;
        readMetadataEntries(new JsonReader(changetype<usize>(json), <usize>json.byteLength), entries);
      }
    }
    return entries;
  }

  set metadata(entries: Map<string, string>) {
    this.entries = entries;
    this.metadataJson = null;
  }

  /** Whether `metadata` has entries (without making the map when it has none). */
  get hasMetadata(): bool {
    if (this.metadataJson != null) return this.metadata.size > 0;
    const entries = this.entries;
    return entries != null && entries.size > 0;
  }

  /** Keeps `len` bytes at `ptr`, a metadata object `scanMetadata` accepted, for `metadata` to read when asked. */
  keepMetadataJson(ptr: usize, len: usize): void {
    this.entries = null;
    // Not `new ArrayBuffer`, which zeroes the bytes before they are copied over.
    const json = __new(len, idof<ArrayBuffer>());
    memory.copy(json, ptr, len);
    this.metadataJson = changetype<ArrayBuffer>(json);
  }
}

// The keys of the Message JSON, snake_case as the platform writes them, then the
// lowerCamelCase spellings the API also accepts; `assign` takes their indices.
const KEYS: StaticArray<string> = [
  "message_id", "sender", "receiver", "message_type", "content", "conversation_id", "reply_with",
  "in_reply_to", "language", "ontology", "protocol", "created_at", "metadata",
  "messageId", "messageType", "conversationId", "replyWith", "inReplyTo", "createdAt",
];
const METADATA_KEY: i32 = 12;

/** Stores a top-level field by its index in KEYS; other keys are ignored. */
function assign(msg: Message, key: i32, value: string): void {
  switch (key) {
    case 0: case 13: msg.messageId = value; break;
    case 1: msg.sender = value; break;
    case 2: msg.receiver = value; break;
    case 3: case 14: msg.messageType = value; break;
    case 4: msg.content = value; break;
    case 5: case 15: msg.conversationId = value; break;
    case 6: case 16: msg.replyWith = value; break;
    case 7: case 17: msg.inReplyTo = value; break;
    case 8: msg.language = value; break;
    case 9: msg.ontology = value; break;
    case 10: msg.protocol = value; break;
    case 11: case 18: msg.createdAt = value; break;
  }
}

/**
 * Reads the entries of a metadata object `scanMetadata` accepted into `entries`: string
 * keys, each value as text; nested values are skipped.
 */
function readMetadataEntries(reader: JsonReader, entries: Map<string, string>): void {
  if (!reader.accept(0x7B) || reader.accept(0x7D)) return;
  do {
    const key = reader.readString();
    if (key == null || !reader.accept(0x3A)) return;
    const next = reader.peek();
    if (next == 0x7B || next == 0x5B) {
      if (!reader.skipValue()) return;
    } else {
      const value = reader.readText();
      if (value == null) return;
      entries.set(key, value);
    }
  } while (reader.accept(0x2C));
}

/**
 * Checks the value of `metadata` without making anything of it: an object of string
 * keys is kept as its JSON text (read into a map only if the agent asks); null or a
 * stray scalar means no metadata. False if it is not well-formed.
 */
function scanMetadata(reader: JsonReader, msg: Message): bool {
  if (reader.peek() != 0x7B) return reader.skipValue();
  const start = reader.position;
  reader.accept(0x7B);
  if (!reader.accept(0x7D)) {
    do {
      if (!reader.skipStringValue() || !reader.accept(0x3A) || !reader.skipValue()) return false;
    } while (reader.accept(0x2C));
    if (!reader.accept(0x7D)) return false;
  }
  const len = reader.position - start;
  // `{}` holds nothing to keep.
  if (len > 2) msg.keepMetadataJson(start, len);
  return true;
}

/** Parses one Message JSON document (UTF-8). Null if it is not a JSON object. */
export function parseMessage(ptr: usize, len: usize): Message | null {
  const reader = new JsonReader(ptr, len);
  const msg = new Message();
  if (!reader.accept(0x7B)) return null;
  if (reader.accept(0x7D)) return reader.atEnd() ? msg : null;
  do {
    const key = reader.readKey(KEYS);
    if (key == BAD_KEY || !reader.accept(0x3A)) return null;
    if (key == METADATA_KEY) {
      if (!scanMetadata(reader, msg)) return null;
    } else {
      // Other keys are read all the same: what is not JSON is refused wherever it is.
      const value = reader.readText();
      if (value == null) return null;
      assign(msg, key, value);
    }
  } while (reader.accept(0x2C));
  return reader.accept(0x7D) && reader.atEnd() ? msg : null;
}

/** Writes `"key":"value"` unless `value` is empty; returns whether anything is written yet. */
function optional(sink: ByteSink, first: bool, key: string, value: string): bool {
  if (value.length == 0) return first;
  writeJsonField(sink, first, key, value);
  return false;
}

/**
 * Appends `msg` as one line of JSON (snake_case keys, empty fields left out, so the
 * platform fills them in). `message_id`, `sender` and `created_at` are the platform's
 * to set and are never written.
 */
export function writeMessageLine(sink: ByteSink, msg: Message): void {
  sink.byte(0x7B);
  const first = optional(sink, true, "receiver", msg.receiver);
  writeJsonField(sink, first, "message_type", msg.messageType);
  writeJsonField(sink, false, "content", msg.content);
  optional(sink, false, "conversation_id", msg.conversationId);
  optional(sink, false, "reply_with", msg.replyWith);
  optional(sink, false, "in_reply_to", msg.inReplyTo);
  optional(sink, false, "language", msg.language);
  optional(sink, false, "ontology", msg.ontology);
  optional(sink, false, "protocol", msg.protocol);
  if (msg.hasMetadata) {
    writeJsonKey(sink, false, "metadata");
    sink.byte(0x7B);
    const metadata = msg.metadata;
    const keys = metadata.keys();
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      writeJsonField(sink, i == 0, key, metadata.get(key));
    }
    sink.byte(0x7D);
  }
  sink.byte(0x7D);
  sink.byte(0x0A);
}
