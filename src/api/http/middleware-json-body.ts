/**
 * Reads the JSON body of the routes whose rule has one (@koa/bodyparser over
 * co-body), after checking `Content-Type: application/json`. Every failure is
 * an SvcError: a body over the limit is PAYLOAD_TOO_LARGE (refused from its
 * Content-Length before it is read, when that is given), malformed JSON, a
 * non-object document or an unsupported encoding is INVALID_ARGUMENT.
 */
import { bodyParser } from '@koa/bodyparser';
import type { Middleware } from 'koa';
import { SvcError } from '../../errors/svc-error.js';
import type { GatewayState } from './gateway-state.js';

export interface JsonBodyOptions {
  /** Largest body accepted, in bytes. */
  limitBytes: number;
  /** Whether the request's route takes a body; other requests pass untouched. */
  expectsBody(method: string, path: string): boolean;
}

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
      return new SvcError('INVALID_ARGUMENT', `malformed JSON body: ${text}`, { field: 'body', reason: 'malformed_json' });
  }
}

export function jsonBodyMiddleware(options: JsonBodyOptions): Middleware<GatewayState> {
  const parse = bodyParser({
    enableTypes: ['json'],
    jsonLimit: options.limitBytes,
    // Only objects and arrays: a bare `"x"` or `1` is no request.
    jsonStrict: true,
    encoding: 'utf-8',
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
    return parse(ctx, next);
  };
}
