/**
 * What a log line may carry. Every field of every line passes through
 * `redactFields` before it is written, at any depth, so a secret cannot
 * reach the output by being nested (`{ req: { headers: { authorization } } }`)
 * or by a caller forgetting a serializer:
 * - credentials (tokens, authorization, API keys, passwords, secrets,
 *   cookies) by key name;
 * - agent modules: the `wasm_module` key and any binary value, written as
 *   `[N bytes]`;
 * - message `content`, except on debug and trace lines, which an operator
 *   only gets by choosing `log_level = "debug"`.
 * The walk also bounds what one line can hold (depth, array length, string
 * length) and breaks reference cycles, so the JSON encoding never throws.
 */
import bunyan from 'bunyan';

export const REDACTED = '[redacted]';
/** Nesting kept; deeper values become `[truncated]`. */
export const MAX_DEPTH = 6;
export const MAX_ARRAY_ITEMS = 50;
export const MAX_STRING_CHARS = 4_096;
export const CONTENT_KEY = 'content';

/** Compared after lower-casing and removing `-` and `_`, so `api_key`, `API-Key` and `apiKey` are one key. */
const SECRET_KEYS: ReadonlySet<string> = new Set([
  'token',
  'accesstoken',
  'refreshtoken',
  'idtoken',
  'sessiontoken',
  'authtoken',
  'bearer',
  'jwt',
  'authorization',
  'proxyauthorization',
  'cookie',
  'setcookie',
  'credentials',
  'wasmmodule',
  'module',
  'modulebytes',
]);
/** Suffixes that mark a secret whatever precedes them (`db_password`, `client_secret`, `x-api-key`). `token` is not one: `page_token` is not a secret. */
const SECRET_SUFFIXES = ['password', 'passwd', 'secret', 'apikey', 'privatekey'] as const;

export function isSecretKey(key: string): boolean {
  const normal = key.toLowerCase().replace(/[-_]/g, '');
  return SECRET_KEYS.has(normal) || SECRET_SUFFIXES.some((suffix) => normal.endsWith(suffix));
}

export interface RedactOptions {
  /** Keep message `content` (debug and trace lines). */
  keepContent: boolean;
}

function isBinary(value: object): value is ArrayBuffer | ArrayBufferView {
  return value instanceof ArrayBuffer || ArrayBuffer.isView(value);
}

function clean(value: unknown, options: RedactOptions, depth: number, ancestors: object[]): unknown {
  switch (typeof value) {
    case 'string':
      return value.length <= MAX_STRING_CHARS ? value : `${value.slice(0, MAX_STRING_CHARS)}…[+${value.length - MAX_STRING_CHARS} chars]`;
    case 'bigint':
      return value.toString();
    case 'function':
    case 'symbol':
    case 'undefined':
      return undefined;
    case 'object':
      break;
    default:
      return value;
  }
  if (value === null || value instanceof Date) return value;
  if (isBinary(value)) return `[${value.byteLength} bytes]`;
  if (ancestors.includes(value)) return '[circular]';
  if (depth >= MAX_DEPTH) return '[truncated]';
  const inner = [...ancestors, value];
  if (value instanceof Error) return clean(bunyan.stdSerializers.err(value), options, depth, inner);
  if (Array.isArray(value)) {
    const items = value.slice(0, MAX_ARRAY_ITEMS).map((item) => clean(item, options, depth + 1, inner));
    if (value.length > MAX_ARRAY_ITEMS) items.push(`[+${value.length - MAX_ARRAY_ITEMS} items]`);
    return items;
  }
  return cleanObject(value as Record<string, unknown>, options, depth + 1, inner);
}

function cleanObject(fields: Record<string, unknown>, options: RedactOptions, depth: number, ancestors: object[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    if (isSecretKey(key) || (key === CONTENT_KEY && !options.keepContent)) out[key] = REDACTED;
    else out[key] = clean(value, options, depth, ancestors);
  }
  return out;
}

/** A redacted copy of `fields`; the caller's objects are never modified. */
export function redactFields(fields: Record<string, unknown>, options: RedactOptions): Record<string, unknown> {
  return cleanObject(fields, options, 0, [fields]);
}
