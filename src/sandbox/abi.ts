/**
 * The message side of the agent ABI (DESIGN.md section 2): what an agent reads
 * on fd 0 and how the lines it writes on fd 1 become outgoing messages. Pure
 * functions; the worker only moves bytes.
 */

import { validateContent, validateId, validateMetadata } from '../bus/message.js';
import { isPerformative, type Performative } from '../bus/performatives.js';
import { SvcError } from '../errors/svc-error.js';

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
export interface OutgoingMessage extends Omit<IncomingMessage, 'message_id' | 'created_at' | 'message_type'> {
  /** Always the agent itself: a line cannot choose its sender. */
  sender: string;
  message_type: Performative;
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

/**
 * The bytes an agent reads on fd 0: one JSON document, no trailing newline.
 * `Buffer.from` rather than a `TextEncoder`: it takes its bytes from Node's
 * pooled slab instead of a new ArrayBuffer per message (1.0 µs instead of
 * 2.7 µs for a 300-byte message here). Safe for the executor pool, which
 * copies inputs into its batch (worker-protocol.ts `writeBatch`) and never
 * transfers them.
 */
export function encodeIncoming(message: IncomingMessage): Uint8Array {
  return Buffer.from(JSON.stringify(message), 'utf8');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

type LineError = Omit<OutputLineError, 'line'>;

/** Why a field value is refused: the Message rules of DESIGN.md section 3, as for a client's message. */
function refusal(error: unknown): LineError {
  if (error instanceof SvcError) return { reason: 'invalid_field', detail: error.message };
  throw error;
}

/** The value of a field that has a lowerCamelCase spelling too; both given is an error. */
function either(line: Record<string, unknown>, snake: string, camel: string, out: { value: unknown }): LineError | null {
  const a = line[snake];
  const b = line[camel];
  if (a !== undefined && b !== undefined) return { reason: 'invalid_field', detail: `${snake} is given twice` };
  out.value = a ?? b;
  return null;
}

/**
 * An id or name field: absent when undefined, null or `''` (proto3, as for a
 * client's message), else a string `validateId` accepts. Returns the string,
 * undefined, or the error.
 */
function readId(field: string, value: unknown): string | undefined | LineError {
  if (value === undefined || value === null || value === '') return undefined;
  try {
    return validateId(field, value);
  } catch (error) {
    return refusal(error);
  }
}

const isError = (value: unknown): value is LineError => typeof value === 'object' && value !== null;

/*
 * The fields are read one by one by name rather than in a loop over their
 * names: a read with a name that varies is a slow generic lookup in V8, and
 * this runs for every line every agent writes.
 */
function parseLine(text: string, incoming: IncomingMessage, agentId: string): OutgoingMessage | LineError {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { reason: 'not_json', detail: 'line is not JSON' };
  }
  if (!isRecord(value)) return { reason: 'not_object', detail: 'line is not a JSON object' };
  const field = { value: undefined as unknown };
  const twice = either(value, 'message_type', 'messageType', field);
  if (twice !== null) return twice;
  const type = field.value;
  if (typeof type !== 'string') return { reason: 'missing_message_type', detail: 'message_type (string) is required' };
  if (!isPerformative(type)) return { reason: 'unknown_performative', detail: `message_type ${JSON.stringify(type)} is not a FIPA performative` };

  const receiver = readId('receiver', value['receiver']);
  if (isError(receiver)) return receiver;
  const conversationTwice = either(value, 'conversation_id', 'conversationId', field);
  if (conversationTwice !== null) return conversationTwice;
  const conversationId = readId('conversation_id', field.value);
  if (isError(conversationId)) return conversationId;
  const replyWithTwice = either(value, 'reply_with', 'replyWith', field);
  if (replyWithTwice !== null) return replyWithTwice;
  const replyWith = readId('reply_with', field.value);
  if (isError(replyWith)) return replyWith;
  const inReplyToTwice = either(value, 'in_reply_to', 'inReplyTo', field);
  if (inReplyToTwice !== null) return inReplyToTwice;
  const inReplyTo = readId('in_reply_to', field.value);
  if (isError(inReplyTo)) return inReplyTo;
  const language = readId('language', value['language']);
  if (isError(language)) return language;
  const ontology = readId('ontology', value['ontology']);
  if (isError(ontology)) return ontology;
  const protocol = readId('protocol', value['protocol']);
  if (isError(protocol)) return protocol;

  const message: OutgoingMessage = { sender: agentId, receiver: receiver ?? incoming.sender, message_type: type };
  if (replyWith !== undefined) message.reply_with = replyWith;
  if (language !== undefined) message.language = language;
  if (ontology !== undefined) message.ontology = ontology;
  if (protocol !== undefined) message.protocol = protocol;
  const conversation = conversationId ?? incoming.conversation_id;
  if (conversation !== undefined) message.conversation_id = conversation;
  message.in_reply_to = inReplyTo ?? incoming.reply_with ?? incoming.message_id;
  try {
    const content = value['content'];
    if (content !== undefined) message.content = validateContent('content', content);
    const metadata = value['metadata'];
    if (metadata !== undefined && metadata !== null) message.metadata = validateMetadata('metadata', metadata);
  } catch (error) {
    return refusal(error);
  }
  return message;
}

/**
 * Turns an execution's stdout lines into outgoing messages. A line without
 * `receiver` replies to the incoming message's sender; `conversation_id`
 * defaults to the incoming one and `in_reply_to` to its `reply_with`, else its
 * `message_id`. A line's fields follow the rules of a client's message
 * (DESIGN.md section 3): lowerCamelCase spellings are read too, `null` and `''`
 * mean absent, and a value a client could not send is an error. Blank lines
 * are skipped; other invalid lines are returned as errors.
 */
export function parseOutput(lines: readonly string[], incoming: IncomingMessage, agentId: string): ParsedOutput {
  const messages: OutgoingMessage[] = [];
  const errors: OutputLineError[] = [];
  for (let line = 0; line < lines.length; line++) {
    const text = lines[line]!;
    if (text.trim() === '') continue;
    const parsed = parseLine(text, incoming, agentId);
    if ('reason' in parsed) errors.push({ line, ...parsed });
    else messages.push(parsed);
  }
  return { messages, errors };
}

/**
 * `parseOutput` for an execution some of whose lines were delivered inside
 * its worker (worker-local.ts): those lines come back as the message their
 * worker delivered (`delivered`, [line, JSON]), in their places among the others.
 */
export function parseOutputAround(
  lines: readonly string[],
  delivered: ReadonlyArray<readonly [number, string]> | undefined,
  incoming: IncomingMessage,
  agentId: string,
): { messages: Array<OutgoingMessage | string>; errors: OutputLineError[] } {
  if (delivered === undefined) return parseOutput(lines, incoming, agentId);
  const messages: Array<OutgoingMessage | string> = [];
  const errors: OutputLineError[] = [];
  let next = 0;
  for (let line = 0; line < lines.length; line++) {
    const hop = delivered[next];
    if (hop !== undefined && hop[0] === line) {
      messages.push(hop[1]);
      next += 1;
      continue;
    }
    const text = lines[line]!;
    if (text.trim() === '') continue;
    const parsed = parseLine(text, incoming, agentId);
    if ('reason' in parsed) errors.push({ line, ...parsed });
    else messages.push(parsed);
  }
  return { messages, errors };
}
