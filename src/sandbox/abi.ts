/**
 * The message side of the agent ABI (DESIGN.md section 2): what an agent reads
 * on fd 0 and how the lines it writes on fd 1 become outgoing messages. Pure
 * functions; the worker only moves bytes.
 */

import { isPerformative, type Performative } from '../bus/performatives.js';

/* The performative list lives with the Message model; re-exported for the ABI's users. */
export { PERFORMATIVES, isPerformative, type Performative } from '../bus/performatives.js';

/** The incoming message as an agent reads it: the Message JSON of DESIGN.md section 3 (snake_case). */
export interface IncomingMessage {
  message_id: string;
  sender: string;
  receiver: string;
  message_type: string;
  content?: unknown;
  conversation_id?: string;
  reply_with?: string;
  in_reply_to?: string;
  language?: string;
  ontology?: string;
  protocol?: string;
  metadata?: Record<string, string>;
  created_at?: string;
}

/** A message an agent sent; the bus adds `message_id` and `created_at`. */
export interface OutgoingMessage {
  /** Always the agent itself: a line cannot choose its sender. */
  sender: string;
  receiver: string;
  message_type: Performative;
  content?: unknown;
  conversation_id?: string;
  reply_with?: string;
  in_reply_to?: string;
  language?: string;
  ontology?: string;
  protocol?: string;
  metadata?: Record<string, string>;
}

export type OutputLineErrorReason =
  | 'not_json'
  | 'not_object'
  | 'missing_message_type'
  | 'unknown_performative'
  | 'invalid_field';

/** A stdout line that is not a message: a counted error, never a crash (DESIGN.md section 2). */
export interface OutputLineError {
  /** Index of the line in the execution's stdout. */
  line: number;
  reason: OutputLineErrorReason;
  detail: string;
}

export interface ParsedOutput {
  messages: OutgoingMessage[];
  errors: OutputLineError[];
}

const STRING_FIELDS = ['receiver', 'conversation_id', 'reply_with', 'in_reply_to', 'language', 'ontology', 'protocol'] as const;
type StringField = (typeof STRING_FIELDS)[number];

const encoder = new TextEncoder();

/** The bytes an agent reads on fd 0: one JSON document, no trailing newline. */
export function encodeIncoming(message: IncomingMessage): Uint8Array {
  return encoder.encode(JSON.stringify(message));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseLine(text: string, incoming: IncomingMessage, agentId: string): OutgoingMessage | Omit<OutputLineError, 'line'> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { reason: 'not_json', detail: 'line is not JSON' };
  }
  if (!isRecord(value)) return { reason: 'not_object', detail: 'line is not a JSON object' };
  const type = value['message_type'];
  if (typeof type !== 'string') return { reason: 'missing_message_type', detail: 'message_type (string) is required' };
  if (!isPerformative(type)) return { reason: 'unknown_performative', detail: `message_type ${JSON.stringify(type)} is not a FIPA performative` };

  const strings: Partial<Record<StringField, string>> = {};
  for (const field of STRING_FIELDS) {
    const v = value[field];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'string') return { reason: 'invalid_field', detail: `${field} must be a string` };
    strings[field] = v;
  }
  const { receiver, conversation_id: conversationId, in_reply_to: inReplyTo, ...rest } = strings;
  const message: OutgoingMessage = { sender: agentId, receiver: receiver ?? incoming.sender, message_type: type, ...rest };
  const conversation = conversationId ?? incoming.conversation_id;
  if (conversation !== undefined) message.conversation_id = conversation;
  message.in_reply_to = inReplyTo ?? incoming.reply_with ?? incoming.message_id;
  if (value['content'] !== undefined) message.content = value['content'];
  const metadata = value['metadata'];
  if (metadata !== undefined && metadata !== null) {
    if (!isRecord(metadata) || !Object.values(metadata).every((v) => typeof v === 'string')) {
      return { reason: 'invalid_field', detail: 'metadata must map strings to strings' };
    }
    message.metadata = metadata as Record<string, string>;
  }
  return message;
}

/**
 * Turns an execution's stdout lines into outgoing messages. A line without
 * `receiver` replies to the incoming message's sender; `conversation_id`
 * defaults to the incoming one and `in_reply_to` to its `reply_with`, else its
 * `message_id`. Blank lines are skipped; other invalid lines are returned as
 * errors.
 */
export function parseOutput(lines: readonly string[], incoming: IncomingMessage, agentId: string): ParsedOutput {
  const messages: OutgoingMessage[] = [];
  const errors: OutputLineError[] = [];
  lines.forEach((text, line) => {
    if (text.trim() === '') return;
    const parsed = parseLine(text, incoming, agentId);
    if ('reason' in parsed) errors.push({ line, ...parsed });
    else messages.push(parsed);
  });
  return { messages, errors };
}
