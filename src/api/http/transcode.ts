/**
 * Builds an RPC's request from an HTTP request the way google.api.http
 * defines it: the body (the whole request, or the one field the rule names),
 * then the query parameters, then the path variables. A path variable wins
 * over nothing: if the body already sets that field to something else, the
 * request is refused rather than silently rewritten.
 */
import type protobuf from 'protobufjs';
import { SvcError } from '../../errors/svc-error.js';
import { decodeFieldValue, decodeMessage, decodeText, shortName, type JsonObject } from './json-codec.js';
import type { HttpRoute, QueryParam } from './routes.js';

export interface HttpInput {
  /** Path variables by router name, percent-decoded. */
  readonly params: Readonly<Record<string, string | undefined>>;
  /** The query string as Koa parses it: a repeated name gives an array. */
  readonly query: Readonly<Record<string, string | readonly string[] | undefined>>;
  /** The parsed JSON body; only read when the route's rule has a body. */
  readonly body?: unknown;
}

function invalid(field: string, message: string, reason: string): SvcError {
  return new SvcError('INVALID_ARGUMENT', message, { field: shortName(field), reason });
}

const queryIndexes = new WeakMap<HttpRoute, Map<string, QueryParam>>();

function queryIndex(route: HttpRoute): Map<string, QueryParam> {
  let index = queryIndexes.get(route);
  if (index === undefined) {
    index = new Map(route.queryParams.flatMap((param) => param.aliases.map((alias) => [alias, param] as const)));
    queryIndexes.set(route, index);
  }
  return index;
}

function getPath(request: JsonObject, path: readonly string[]): unknown {
  let node: unknown = request;
  for (const name of path) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as JsonObject)[name];
  }
  return node;
}

function setPath(request: JsonObject, path: readonly string[], value: unknown): void {
  let node = request;
  for (const name of path.slice(0, -1)) {
    const next = node[name];
    if (typeof next === 'object' && next !== null) node = next as JsonObject;
    else {
      const created: JsonObject = {};
      node[name] = created;
      node = created;
    }
  }
  node[path[path.length - 1] as string] = value;
}

function decodeBody(route: HttpRoute, body: unknown): JsonObject {
  if (route.body === undefined) return {};
  if (route.body === '*') return decodeMessage(route.requestType, body);
  const field = route.requestType.fields[route.body] as protobuf.Field;
  // The body *is* that field, so errors name fields as the client wrote them in the body, without a prefix.
  return { [route.body]: decodeFieldValue(field, body, '') };
}

/** The RPC request (snake_case, only what was given) for one HTTP request on `route`. */
export function transcode(route: HttpRoute, input: HttpInput): JsonObject {
  const request = decodeBody(route, input.body);
  const given = new Map<string, string>();

  const index = queryIndex(route);
  for (const [name, raw] of Object.entries(input.query)) {
    const param = index.get(name);
    if (param === undefined) throw invalid(name, `unknown query parameter ${shortName(name)}`, 'unknown_field');
    const texts: readonly string[] = raw === undefined ? [] : typeof raw === 'string' ? [raw] : raw;
    const value = decodeText(param.field, texts, name);
    if (value === undefined) continue;
    const key = param.path.join('.');
    const earlier = given.get(key);
    if (earlier !== undefined) throw invalid(name, `${name} and ${earlier} name the same field`, 'duplicate_field');
    given.set(key, name);
    setPath(request, param.path, value);
  }

  for (const param of route.pathParams) {
    const text = input.params[param.name];
    const value = decodeText(param.field, text === undefined ? [] : [text], param.path.join('.'));
    const existing = getPath(request, param.path);
    if (existing !== undefined && existing !== value) {
      const field = (param.path[0] === route.body ? param.path.slice(1) : param.path).join('.');
      throw invalid(field, `${field} must be absent or ${String(value)}, as the path says`, 'path_mismatch');
    }
    if (value !== undefined) setPath(request, param.path, value);
  }
  return request;
}
