/**
 * A message as it crosses from node to node: the bus `Message` in its JSON
 * form. The receiving node checks the shape (a node on another version, a
 * damaged payload) before it delivers anything.
 */
import type { Message } from '../bus/message.js';
import { isPerformative } from '../bus/performatives.js';

const REQUIRED = ['message_id', 'sender', 'receiver', 'conversation_id', 'created_at'] as const;
const OPTIONAL = ['reply_with', 'in_reply_to', 'language', 'ontology', 'protocol'] as const;

export function encodeForwarded(message: Message): string {
  return JSON.stringify(message);
}

/** The JSON object `text` holds, or undefined for text that is not one (a peer's payload is never trusted). */
export function parseJsonObject(text: string): Record<string, unknown> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  return value === null || typeof value !== 'object' ? undefined : (value as Record<string, unknown>);
}

/** The message, or undefined for text that is not one. */
export function decodeForwarded(text: string): Message | undefined {
  const m = parseJsonObject(text);
  if (m === undefined) return undefined;
  for (const key of REQUIRED) if (typeof m[key] !== 'string' || m[key] === '') return undefined;
  for (const key of OPTIONAL) if (m[key] !== undefined && typeof m[key] !== 'string') return undefined;
  if (typeof m.message_type !== 'string' || !isPerformative(m.message_type)) return undefined;
  const metadata = m.metadata;
  if (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata)) return undefined;
  if (!Object.values(metadata).every((v) => typeof v === 'string')) return undefined;
  return m as unknown as Message;
}
