/**
 * Reads the JSON body of the routes whose rule has one, after checking
 * `Content-Type: application/json` and its charset (UTF-8, RFC 8259's only
 * encoding for JSON exchanged between systems). @koa/bodyparser (over
 * co-body and raw-body) reads the bytes, with the size limit and the
 * Content-Encoding; strict-json.ts parses them. The body parser always
 * decodes text, so it is asked for latin1, which maps each byte to one
 * character and back: the bytes reach the strict parser as sent, where a
 * UTF-8 decoding would already have turned invalid sequences into U+FFFD.
 *
 * Every failure is an SvcError: a body over the limit is PAYLOAD_TOO_LARGE
 * (refused from its Content-Length before it is read, when that is given); a
 * wrong media type or charset, malformed JSON, invalid UTF-8, a key given
 * twice or an unsupported encoding is INVALID_ARGUMENT.
 */
import { bodyParser } from '@koa/bodyparser';
import type { Middleware } from 'koa';
import { SvcError } from '../../errors/svc-error.js';
import type { GatewayState } from './gateway-state.js';
import { parseStrictJson } from './strict-json.js';

export interface JsonBodyOptions {
  /** Largest body accepted, in bytes. */
  limitBytes: number;
  /** Whether the request's route takes a body; other requests pass untouched. */
  expectsBody(method: string, path: string): boolean;
}

/** The one-byte-one-character encoding the bytes travel in from the body parser to `parseStrictJson`. */
const BYTES_AS_TEXT = 'latin1';

function parseFailure(err: unknown, limitBytes: number): SvcError {
  const { type, status, message } = (typeof err === 'object' && err !== null ? err : {}) as { type?: unknown; status?: unknown; message?: unknown };
  const text = typeof message === 'string' ? message : 'unreadable body';
  // inflation marks an unknown Content-Encoding by status alone; raw-body's failures carry a type.
  switch (status === 415 ? 'encoding.unsupported' : type) {
    case 'entity.too.large':
      return new SvcError('PAYLOAD_TOO_LARGE', `request body exceeds the limit of ${limitBytes} bytes`, { reason: 'too_large', limit: String(limitBytes) });
    case 'encoding.unsupported':
      return new SvcError('INVALID_ARGUMENT', text, { field: 'Content-Encoding', reason: 'unsupported_encoding' });
    case 'request.aborted':
    case 'request.size.invalid':
      return new SvcError('INVALID_ARGUMENT', text, { field: 'body', reason: 'incomplete_body' });
    default:
      return new SvcError('INVALID_ARGUMENT', `unreadable body: ${text}`, { field: 'body', reason: 'malformed_json' });
  }
}

/** JSON has one encoding; a charset parameter may only name it. */
function checkCharset(charset: string): void {
  if (charset === '' || charset.toLowerCase() === 'utf-8') return;
  throw new SvcError('INVALID_ARGUMENT', `the charset of a JSON body must be utf-8, not ${charset.slice(0, 64)}`, {
    field: 'Content-Type',
    reason: 'unsupported_charset',
  });
}

export function jsonBodyMiddleware(options: JsonBodyOptions): Middleware<GatewayState> {
  const read = bodyParser({
    enableTypes: ['text'],
    extendTypes: { text: ['application/json'] },
    textLimit: options.limitBytes,
    encoding: BYTES_AS_TEXT,
    onError: (err) => {
      throw parseFailure(err, options.limitBytes);
    },
  }) as unknown as Middleware<GatewayState>;
  return (ctx, next) => {
    if (!options.expectsBody(ctx.method, ctx.path)) return next();
    const type = ctx.request.type;
    if (type !== 'application/json') {
      throw new SvcError('INVALID_ARGUMENT', `Content-Type must be application/json, not ${type === '' ? 'absent' : type}`, {
        field: 'Content-Type',
        reason: 'unsupported_media_type',
      });
    }
    checkCharset(ctx.request.charset);
    return read(ctx, () => {
      const text = ctx.request.body;
      ctx.request.body = parseStrictJson(Buffer.from(typeof text === 'string' ? text : '', BYTES_AS_TEXT));
      return next();
    });
  };
}
