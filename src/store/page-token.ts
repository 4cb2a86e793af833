/**
 * List page tokens: the key of the last agent on the page, (createdAt,
 * agentId), as base64url JSON. Clients treat it as opaque; paging by key
 * rather than offset keeps pages stable when agents are added or removed
 * between calls, and a token stays valid after its agent is undeployed.
 */
import { StoreError } from './store-error.js';

export interface PageKey {
  createdAt: number;
  agentId: string;
}

/** Longer than any token we issue (agent ids are short), so garbage is refused before decoding. */
const MAX_TOKEN_LENGTH = 1024;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

export function encodePageToken(key: PageKey): string {
  return Buffer.from(JSON.stringify([key.createdAt, key.agentId])).toString('base64url');
}

/** Throws `invalid_page_token` for anything `encodePageToken` did not produce. */
export function decodePageToken(token: string): PageKey {
  // Node's base64url decoder skips characters outside the alphabet, so check them first.
  if (token.length > MAX_TOKEN_LENGTH || !BASE64URL.test(token)) throw invalid();
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (!Array.isArray(value) || value.length !== 2) throw invalid();
  const [createdAt, agentId] = value as unknown[];
  if (!Number.isSafeInteger(createdAt) || typeof agentId !== 'string' || agentId === '') throw invalid();
  return { createdAt: createdAt as number, agentId };
}

function invalid(): StoreError {
  return new StoreError('invalid_page_token', 'page_token is not one this server issued', { field: 'page_token' });
}
