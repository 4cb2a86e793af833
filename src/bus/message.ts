/**
 * The Message model of DESIGN.md section 3: its type, the validation of what a
 * client sends, the defaults the platform fills in, and the FIPA `failure`
 * the platform returns for a message it could not deliver or handle.
 */
import { SvcError } from '../errors/svc-error.js';
import { illFormed, isWellFormed, truncate } from '../text/well-formed.js';
import type { IdGenerator } from './message-id.js';
import { isPerformative, type Performative } from './performatives.js';

/** One FIPA-ACL message, snake_case as on the wire. Absent optional fields are omitted, never `''`. */
export interface Message {
  /** A ULID, so ids sort by creation time. */
  message_id: string;
  /** An agent id, `client:<principal>`, or {@link PLATFORM_SENDER}. */
  sender: string;
  receiver: string;
  message_type: Performative;
  /** Any JSON value. */
  content?: unknown;
  conversation_id: string;
  reply_with?: string;
  in_reply_to?: string;
  language?: string;
  ontology?: string;
  protocol?: string;
  /** Carries `traceparent`/`tracestate`. */
  metadata: Record<string, string>;
  /** RFC 3339, UTC, millisecond precision. */
  created_at: string;
}

/** What a sender supplies; {@link completeMessage} fills in the rest. Agents' parsed output lines are drafts. */
export type MessageDraft = Pick<Message, 'sender' | 'receiver' | 'message_type'> &
  Partial<Omit<Message, 'sender' | 'receiver' | 'message_type'>>;

/** The sender of the messages the platform itself generates (failures). Never a valid agent id. */
export const PLATFORM_SENDER = 'platform';

export interface MessageLimits {
  /** UTF-8 bytes of `content`: a string counts its own bytes, anything else its JSON text. */
  maxContentBytes: number;
  maxMetadataEntries: number;
  /** UTF-8 bytes of all metadata keys and values together. */
  maxMetadataBytes: number;
  /** Characters of an id or name field (`receiver`, `conversation_id`, `language`, a metadata key, ...). */
  maxIdLength: number;
}

export const DEFAULT_MESSAGE_LIMITS: Readonly<MessageLimits> = {
  maxContentBytes: 1024 * 1024,
  maxMetadataEntries: 32,
  maxMetadataBytes: 8 * 1024,
  maxIdLength: 256,
};

export interface CompleteOptions {
  /** Milliseconds since the epoch, for `created_at`. */
  now?: () => number;
  /** For `message_id` and a new `conversation_id`: the server's own generator, so two servers in one process share no id state. */
  newId: IdGenerator;
}

export interface ValidateOptions extends CompleteOptions {
  /** The authenticated sender, `client:<principal>`; a client cannot choose another. */
  sender: string;
  /** The receiver named by the request path (`POST /agents/{id}/messages`), if any. */
  receiver?: string;
  limits?: MessageLimits;
}

type FieldKind = 'server' | 'sender' | 'receiver' | 'performative' | 'content' | 'id' | 'metadata';
type FieldName = keyof Message;

/** Every field a client may name, and how it is checked. A Map, so `__proto__` and friends are just unknown. */
const FIELDS = new Map<string, FieldKind>([
  ['message_id', 'server'],
  ['created_at', 'server'],
  ['sender', 'sender'],
  ['receiver', 'receiver'],
  ['message_type', 'performative'],
  ['content', 'content'],
  ['conversation_id', 'id'],
  ['reply_with', 'id'],
  ['in_reply_to', 'id'],
  ['language', 'id'],
  ['ontology', 'id'],
  ['protocol', 'id'],
  ['metadata', 'metadata'],
]);

/** lowerCamelCase spellings accepted on input (the proto3 JSON mapping); output is always snake_case. */
const CAMEL_CASE = new Map<string, FieldName>([
  ['messageId', 'message_id'],
  ['createdAt', 'created_at'],
  ['messageType', 'message_type'],
  ['conversationId', 'conversation_id'],
  ['replyWith', 'reply_with'],
  ['inReplyTo', 'in_reply_to'],
]);

// eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;

function invalid(field: string, message: string, reason: string, extra: Record<string, string> = {}): SvcError {
  return new SvcError('INVALID_ARGUMENT', message, { field, reason, ...extra });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** proto3 semantics: `null` and `''` mean "not set", so gRPC defaults and JSON nulls read as absent. */
function isAbsent(value: unknown): boolean {
  return value === undefined || value === null || value === '';
}

/** Checks an id or name field: a well-formed string of at most `maxIdLength` characters, none of them a control character. */
export function validateId(field: string, value: unknown, limits: MessageLimits = DEFAULT_MESSAGE_LIMITS): string {
  if (typeof value !== 'string') throw invalid(field, `${field} must be a string`, 'wrong_type', { expected: 'string' });
  if (value.length > limits.maxIdLength) {
    throw invalid(field, `${field} exceeds ${limits.maxIdLength} characters`, 'too_long', { limit: String(limits.maxIdLength) });
  }
  if (CONTROL_CHARS.test(value)) throw invalid(field, `${field} contains control characters`, 'control_characters');
  if (!isWellFormed(value)) throw illFormed(field);
  return value;
}

function contentBytes(field: string, value: unknown): number {
  if (typeof value === 'string') {
    if (!isWellFormed(value)) throw illFormed(field);
    return Buffer.byteLength(value, 'utf8');
  }
  // JSON.stringify escapes a lone surrogate, so its text would pass: the replacer sees every key and string.
  let wellFormed = true;
  const check = (key: string, item: unknown): unknown => {
    if (!isWellFormed(key) || (typeof item === 'string' && !isWellFormed(item))) wellFormed = false;
    return item;
  };
  let text: string | undefined;
  try {
    text = JSON.stringify(value, check);
  } catch {
    text = undefined; // cycles, BigInt, or nesting deeper than the stack: not a JSON value
  }
  if (text === undefined) throw invalid(field, `${field} must be a JSON value`, 'wrong_type', { expected: 'json' });
  if (!wellFormed) throw illFormed(field);
  return Buffer.byteLength(text, 'utf8');
}

/** Checks a `content`: any JSON value, its strings well-formed, of at most `maxContentBytes` (PAYLOAD_TOO_LARGE past it). */
export function validateContent(field: string, value: unknown, limits: MessageLimits = DEFAULT_MESSAGE_LIMITS): unknown {
  const bytes = contentBytes(field, value);
  if (bytes > limits.maxContentBytes) {
    throw new SvcError('PAYLOAD_TOO_LARGE', `content of ${bytes} bytes exceeds the limit of ${limits.maxContentBytes}`, {
      field,
      reason: 'too_large',
      limit: String(limits.maxContentBytes),
      size: String(bytes),
    });
  }
  return value;
}

/** Checks a `metadata` map: strings to strings, keys valid ids, within the entry and byte limits. */
export function validateMetadata(field: string, value: unknown, limits: MessageLimits = DEFAULT_MESSAGE_LIMITS): Record<string, string> {
  if (!isRecord(value)) throw invalid(field, `${field} must be an object of strings`, 'wrong_type', { expected: 'map<string,string>' });
  const entries = Object.entries(value);
  if (entries.length > limits.maxMetadataEntries) {
    throw invalid(field, `${field} has more than ${limits.maxMetadataEntries} entries`, 'too_many_entries', { limit: String(limits.maxMetadataEntries) });
  }
  let bytes = 0;
  for (const [key, v] of entries) {
    if (key === '') throw invalid(field, `${field} has an empty key`, 'empty_key');
    // Named by the map alone: `metadata.<key>` would echo the ill-formed key.
    if (!isWellFormed(key)) throw illFormed(field);
    const entry = `${field}.${key}`;
    validateId(entry, key, limits);
    if (typeof v !== 'string') throw invalid(entry, `${entry} must be a string`, 'wrong_type', { expected: 'string' });
    if (!isWellFormed(v)) throw illFormed(entry);
    bytes += Buffer.byteLength(key, 'utf8') + Buffer.byteLength(v, 'utf8');
  }
  if (bytes > limits.maxMetadataBytes) {
    throw new SvcError('PAYLOAD_TOO_LARGE', `${field} of ${bytes} bytes exceeds the limit of ${limits.maxMetadataBytes}`, {
      field,
      reason: 'too_large',
      limit: String(limits.maxMetadataBytes),
      size: String(bytes),
    });
  }
  // fromEntries defines own properties, so a `__proto__` key stays data and cannot reach the prototype.
  return Object.fromEntries(entries) as Record<string, string>;
}

/**
 * Checks a message a client sent (parsed JSON, or a gRPC request object) and
 * returns it completed. Every refusal is an `SvcError` whose metadata `field`
 * names the offending field as the client spelled it: unknown or repeated
 * fields, wrong types, ids too long or with control characters, a string
 * anywhere (content and metadata keys included) holding a lone UTF-16
 * surrogate (reason `invalid_utf16`), a `message_type` outside the 22
 * performatives (metadata `value`), a `sender` other than the authenticated
 * one, a `message_id` or `created_at` (both server-assigned). Oversized
 * `content` or `metadata` is PAYLOAD_TOO_LARGE.
 */
export function validateMessage(input: unknown, opts: ValidateOptions): Message {
  const limits = opts.limits ?? DEFAULT_MESSAGE_LIMITS;
  if (!isRecord(input)) throw invalid('message', 'a message must be a JSON object', 'wrong_type', { expected: 'object' });

  const seen = new Set<string>();
  const draft: Partial<Message> = {};
  for (const [given, value] of Object.entries(input)) {
    const name = CAMEL_CASE.get(given) ?? given;
    const kind = FIELDS.get(name);
    if (kind === undefined) throw invalid(given, `unknown field ${given}`, 'unknown_field');
    if (seen.has(name)) throw invalid(given, `${name} is given twice`, 'duplicate_field');
    seen.add(name);
    if (isAbsent(value)) continue;
    switch (kind) {
      case 'server':
        throw invalid(given, `${given} is assigned by the server`, 'server_assigned');
      case 'sender':
        if (validateId(given, value, limits) !== opts.sender) {
          throw invalid(given, `sender must be absent or ${opts.sender}`, 'sender_mismatch');
        }
        break;
      case 'receiver':
        draft.receiver = validateId(given, value, limits);
        break;
      case 'performative':
        if (typeof value !== 'string') throw invalid(given, `${given} must be a string`, 'wrong_type', { expected: 'string' });
        if (!isPerformative(value)) {
          if (!isWellFormed(value)) throw illFormed(given);
          const shown = truncate(value, 64);
          throw invalid(given, `message_type ${JSON.stringify(shown)} is not a FIPA performative`, 'unknown_performative', { value: shown });
        }
        draft.message_type = value;
        break;
      case 'content':
        draft.content = validateContent(given, value, limits);
        break;
      case 'id':
        (draft as Record<string, unknown>)[name] = validateId(given, value, limits);
        break;
      case 'metadata':
        draft.metadata = validateMetadata(given, value, limits);
        break;
    }
  }

  if (opts.receiver !== undefined) {
    if (draft.receiver !== undefined && draft.receiver !== opts.receiver) {
      throw invalid('receiver', `receiver must be absent or ${opts.receiver}`, 'receiver_mismatch');
    }
    draft.receiver = opts.receiver;
  }
  if (draft.receiver === undefined) throw invalid('receiver', 'receiver is required', 'required');
  if (draft.message_type === undefined) throw invalid('message_type', 'message_type is required', 'required');
  return completeMessage({ ...draft, sender: opts.sender, receiver: draft.receiver, message_type: draft.message_type }, opts);
}

/**
 * `created_at` of the last millisecond seen: `toISOString` costs about 0.5 µs
 * here and every message an agent sends is completed on the main thread,
 * many of them within one millisecond.
 */
let createdAtMs = Number.NaN;
let createdAtText = '';

function createdAt(ms: number): string {
  if (ms !== createdAtMs) {
    createdAtText = new Date(ms).toISOString();
    createdAtMs = ms;
  }
  return createdAtText;
}

/**
 * Fills in what the platform assigns: `message_id` (a new ULID), `created_at`
 * (now), `conversation_id` (a new id: the message starts a conversation) and
 * an empty `metadata`. Values already in the draft are kept. The result has
 * the fields in one fixed order, so its JSON form is stable (and messages share
 * few hidden classes, which keeps the code that reads them fast).
 */
export function completeMessage(draft: MessageDraft, opts: CompleteOptions): Message {
  const id = opts.newId;
  const message: Message = {
    message_id: draft.message_id ?? id(),
    sender: draft.sender,
    receiver: draft.receiver,
    message_type: draft.message_type,
    conversation_id: draft.conversation_id ?? id(),
    metadata: draft.metadata ?? {},
    created_at: draft.created_at ?? createdAt((opts.now ?? Date.now)()),
  };
  if (draft.content !== undefined) message.content = draft.content;
  if (draft.reply_with !== undefined) message.reply_with = draft.reply_with;
  if (draft.in_reply_to !== undefined) message.in_reply_to = draft.in_reply_to;
  if (draft.language !== undefined) message.language = draft.language;
  if (draft.ontology !== undefined) message.ontology = draft.ontology;
  if (draft.protocol !== undefined) message.protocol = draft.protocol;
  return message;
}

/** Why a message could not be delivered or handled; also the metadata `failure_reason` of the failure message. */
export type FailureReason = 'unknown_receiver' | 'agent_failed' | 'mailbox_full' | 'memory_pressure' | 'execution_crashed' | 'permission_denied';

export const FAILURE_REASONS: readonly FailureReason[] = ['unknown_receiver', 'agent_failed', 'mailbox_full', 'memory_pressure', 'execution_crashed', 'permission_denied'];

const FAILURE_TEXT: Readonly<Record<FailureReason, string>> = {
  unknown_receiver: 'unknown receiver',
  agent_failed: 'agent failed',
  mailbox_full: 'mailbox full',
  memory_pressure: 'memory pressure',
  execution_crashed: 'execution crashed',
  permission_denied: 'permission denied',
};

/** Trace context travels with the failure, so it joins the trace of the message that failed. */
const CARRIED_METADATA = ['traceparent', 'tracestate'] as const;

/**
 * False for a `failure`, for a message from the platform and for one to it:
 * FIPA leaves a failed failure unanswered, and answering it would let two
 * parties bounce failures forever. An agent that answers every message
 * replies to the platform's failures; that reply reaches nobody, and a failure
 * for it would bring on the next reply, and so on without end.
 */
export function canReportFailure(original: Message): boolean {
  return original.message_type !== 'failure' && original.sender !== PLATFORM_SENDER && original.receiver !== PLATFORM_SENDER;
}

/**
 * The FIPA `failure` the platform sends to the sender of `original`. Content
 * is the reason as text (`unknown receiver`, `agent failed`, `mailbox full`, `memory pressure`,
 * `execution crashed: <detail>`); metadata carries `failure_reason`,
 * `failed_message_id`, `failed_receiver` (whom the original was for: a
 * stream filtered by that agent carries the failure) and the original's trace
 * context. It stays in the
 * original's conversation and protocol, `in_reply_to` its `reply_with`, else
 * its `message_id` (the same rule as an agent's reply).
 */
export function failureMessage(original: Message, reason: FailureReason, opts: CompleteOptions & { detail?: string }): Message {
  const metadata: Record<string, string> = { failure_reason: reason, failed_message_id: original.message_id, failed_receiver: original.receiver };
  for (const key of CARRIED_METADATA) {
    const value = original.metadata[key];
    if (value !== undefined) metadata[key] = value;
  }
  const draft: MessageDraft = {
    sender: PLATFORM_SENDER,
    receiver: original.sender,
    message_type: 'failure',
    content: opts.detail ? `${FAILURE_TEXT[reason]}: ${opts.detail}` : FAILURE_TEXT[reason],
    conversation_id: original.conversation_id,
    in_reply_to: original.reply_with ?? original.message_id,
    metadata,
  };
  if (original.protocol !== undefined) draft.protocol = original.protocol;
  return completeMessage(draft, opts);
}
