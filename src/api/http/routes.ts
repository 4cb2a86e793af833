/**
 * The REST routes, read from the `google.api.http` rules of the schema's RPCs
 * at start (DESIGN.md section 1: the proto defines the API once). A rule gives
 * the method, a path template whose variables fill request fields
 * (`{message.receiver}`), and where the body goes (`*`: the whole request;
 * a field name: that field). Every request field neither bound by the path nor
 * carried by the body is a query parameter.
 *
 * Template syntax supported: literal segments and single-segment variables.
 * The rest of the google.api.http grammar (`*`, `**`, `{x=a/*}`, `:verb`) is
 * refused at start, naming the RPC, rather than matched wrongly.
 */
import protobuf from 'protobufjs';

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

/** A request field named by a path of snake_case field names, e.g. `['message', 'receiver']`. */
export interface FieldRef {
  readonly path: readonly string[];
  /** The leaf field descriptor. */
  readonly field: protobuf.Field;
}

export interface PathParam extends FieldRef {
  /** The router's name for the variable (`message_receiver`): path-to-regexp wants an identifier. */
  readonly name: string;
}

export interface QueryParam extends FieldRef {
  /** The documented name: the leaf (`message_types`) when no other query field shares it, else the dotted path. */
  readonly name: string;
  /** Every spelling accepted: the name, the dotted path, and their lowerCamelCase forms. */
  readonly aliases: readonly string[];
}

export interface HttpRoute {
  readonly rpc: string;
  /** Unique per route: the RPC name, then `2`, `3`, ... for additional bindings. */
  readonly operationId: string;
  readonly method: HttpMethod;
  /** As written in the proto: `/api/v1/agents/{message.receiver}/messages`. */
  readonly template: string;
  /** For @koa/router: `/api/v1/agents/:message_receiver/messages`. */
  readonly routerPath: string;
  readonly pathParams: readonly PathParam[];
  /** `*` (the body is the request), a top-level field name, or undefined (no body). */
  readonly body: string | undefined;
  readonly queryParams: readonly QueryParam[];
  readonly requestType: protobuf.Type;
  readonly responseType: protobuf.Type;
  /** Server streaming: served over WebSocket (and a plain GET where the RPC's handler allows). */
  readonly streaming: boolean;
  /** The path variables by router name (percent-decoded), or undefined when `path` is not this route's. */
  match(path: string): Record<string, string> | undefined;
}

/** The JSON form of one google.api.HttpRule, as protobufjs parses the option. */
interface HttpRule {
  get?: string;
  post?: string;
  put?: string;
  patch?: string;
  delete?: string;
  custom?: { kind?: string; path?: string };
  body?: string;
  additional_bindings?: HttpRule | HttpRule[];
}

const HTTP_RULE_OPTION = '(google.api.http)';

function fail(rpc: string, message: string): Error {
  return new Error(`google.api.http rule of ${rpc}: ${message}`);
}

/** The rule of a method and its additional bindings, flattened; protobufjs gives one binding as an object, several as an array. */
export function httpRules(method: protobuf.Method): HttpRule[] {
  const rules: HttpRule[] = [];
  for (const option of method.parsedOptions ?? []) {
    const rule = (option as Record<string, unknown>)[HTTP_RULE_OPTION];
    if (rule === undefined) continue;
    const primary = rule as HttpRule;
    rules.push(primary);
    const extra = primary.additional_bindings;
    if (extra !== undefined) rules.push(...(Array.isArray(extra) ? extra : [extra]));
  }
  return rules;
}

function ruleMethod(rpc: string, rule: HttpRule): { method: HttpMethod; template: string } {
  const set: Array<[string, string | undefined]> = [
    ['GET', rule.get],
    ['POST', rule.post],
    ['PUT', rule.put],
    ['PATCH', rule.patch],
    ['DELETE', rule.delete],
    [rule.custom?.kind?.toUpperCase() ?? '', rule.custom?.path],
  ];
  const given = set.filter(([, template]) => template !== undefined && template !== '');
  if (given.length !== 1) throw fail(rpc, 'exactly one of get, post, put, patch, delete or custom must be set');
  const [method, template] = given[0] as [string, string];
  if (!(HTTP_METHODS as readonly string[]).includes(method)) throw fail(rpc, `unsupported method ${method}`);
  return { method: method as HttpMethod, template };
}

/** Follows a dotted field path through message fields; the leaf must be a singular scalar. */
function resolveField(rpc: string, type: protobuf.Type, dotted: string): FieldRef {
  const path = dotted.split('.');
  let current: protobuf.Type = type;
  let field: protobuf.Field | undefined;
  for (const [i, name] of path.entries()) {
    field = current.fields[name];
    if (field === undefined) throw fail(rpc, `${type.name} has no field ${path.slice(0, i + 1).join('.')}`);
    if (i < path.length - 1) {
      if (!(field.resolvedType instanceof protobuf.Type) || field.repeated || field.map) throw fail(rpc, `${dotted} does not lead through a message field`);
      current = field.resolvedType;
    }
  }
  const leaf = field as protobuf.Field;
  if (leaf.repeated || leaf.map || leaf.resolvedType instanceof protobuf.Type) throw fail(rpc, `path variable ${dotted} must be a singular scalar field`);
  return { path, field: leaf };
}

const LITERAL = /^[A-Za-z0-9._~-]+$/;
const VARIABLE = /^\{([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\}$/;

interface Segment {
  literal?: string;
  param?: PathParam;
}

function parseTemplate(rpc: string, template: string, type: protobuf.Type): Segment[] {
  if (!template.startsWith('/') || template === '/') throw fail(rpc, `template ${template} must start with / and name a path`);
  return template
    .slice(1)
    .split('/')
    .map((text) => {
      if (LITERAL.test(text)) return { literal: text };
      const variable = VARIABLE.exec(text);
      if (variable === null) throw fail(rpc, `unsupported template segment "${text}" in ${template}`);
      const dotted = variable[1] as string;
      return { param: { name: dotted.replaceAll('.', '_'), ...resolveField(rpc, type, dotted) } };
    });
}

export function lowerCamel(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** Singular and repeated scalars reachable through singular message fields, depth-first in field order. */
function leafFields(type: protobuf.Type, prefix: readonly string[] = [], outer: ReadonlySet<protobuf.Type> = new Set()): FieldRef[] {
  const leaves: FieldRef[] = [];
  // A message that contains itself would recurse for ever; it is left out of the query form.
  const seen = new Set([...outer, type]);
  for (const field of type.fieldsArray) {
    const path = [...prefix, field.name];
    const nested = field.resolvedType instanceof protobuf.Type ? field.resolvedType : undefined;
    if (field.map) continue; // a map has no query form
    if (nested === undefined) leaves.push({ path, field });
    else if (!field.repeated && !seen.has(nested)) leaves.push(...leafFields(nested, path, seen));
  }
  return leaves;
}

function queryParams(type: protobuf.Type, bound: readonly PathParam[], body: string | undefined): QueryParam[] {
  if (body === '*') return [];
  const key = (path: readonly string[]): string => path.join('.');
  const taken = new Set(bound.map((p) => key(p.path)));
  const leaves = leafFields(type).filter((leaf) => !taken.has(key(leaf.path)) && leaf.path[0] !== body);
  const count = new Map<string, number>();
  for (const leaf of leaves) count.set(leaf.field.name, (count.get(leaf.field.name) ?? 0) + 1);
  return leaves.map((leaf) => {
    const dotted = key(leaf.path);
    const name = count.get(leaf.field.name) === 1 ? leaf.field.name : dotted;
    const spellings = new Set([name, dotted, lowerCamel(name), leaf.path.map(lowerCamel).join('.')]);
    return { ...leaf, name, aliases: [...spellings] };
  });
}

/** Escapes what path-to-regexp v8 reads as syntax, though our literals never contain it. */
function routerLiteral(text: string): string {
  return text.replace(/[{}()[\]+?!:*\\]/g, '\\$&');
}

// A lookup asks every route about the same path: it is split once, for all of them.
let lastPath: string | undefined;
let lastParts: readonly string[] = [];

function pathParts(path: string): readonly string[] {
  if (path !== lastPath) {
    // A trailing slash is tolerated, as @koa/router does by default.
    lastParts = (path.length > 1 && path.endsWith('/') ? path.slice(1, -1) : path.slice(1)).split('/');
    lastPath = path;
  }
  return lastParts;
}

function compileMatcher(segments: readonly Segment[]): HttpRoute['match'] {
  return (path) => {
    const parts = pathParts(path);
    if (parts.length !== segments.length) return undefined;
    // Literals first: most routes fail on one, before anything is decoded or allocated.
    for (let i = 0; i < segments.length; i++) {
      const literal = segments[i]?.literal;
      if (literal !== undefined && parts[i] !== literal) return undefined;
    }
    const params: Record<string, string> = {};
    for (let i = 0; i < segments.length; i++) {
      const param = segments[i]?.param;
      if (param === undefined) continue;
      const part = parts[i] as string;
      if (part === '') return undefined;
      try {
        params[param.name] = decodeURIComponent(part);
      } catch {
        return undefined; // malformed percent-encoding names no resource
      }
    }
    return params;
  };
}

/** Every route of every RPC carrying a google.api.http rule, in schema order; RPCs without one are gRPC-only. */
export function deriveRoutes(service: protobuf.Service): HttpRoute[] {
  const routes: HttpRoute[] = [];
  const seen = new Map<string, string>();
  for (const method of service.methodsArray) {
    const rpc = method.name;
    const requestType = method.resolvedRequestType ?? service.lookupType(method.requestType);
    const responseType = method.resolvedResponseType ?? service.lookupType(method.responseType);
    for (const [index, rule] of httpRules(method).entries()) {
      const { method: httpMethod, template } = ruleMethod(rpc, rule);
      const segments = parseTemplate(rpc, template, requestType);
      const pathParams = segments.flatMap((s) => (s.param ? [s.param] : []));
      const body = rule.body === undefined || rule.body === '' ? undefined : rule.body;
      if (body !== undefined && body !== '*' && requestType.fields[body] === undefined) throw fail(rpc, `body names no field of ${requestType.name}: ${body}`);
      if (body !== undefined && (httpMethod === 'GET' || httpMethod === 'DELETE')) throw fail(rpc, `${httpMethod} cannot carry a body`);
      const shape = `${httpMethod} ${segments.map((s) => s.literal ?? '*').join('/')}`;
      const clash = seen.get(shape);
      if (clash !== undefined) throw fail(rpc, `${httpMethod} ${template} duplicates a route of ${clash}`);
      seen.set(shape, rpc);
      routes.push({
        rpc,
        operationId: index === 0 ? rpc : `${rpc}${index + 1}`,
        method: httpMethod,
        template,
        routerPath: `/${segments.map((s) => (s.literal !== undefined ? routerLiteral(s.literal) : `:${(s.param as PathParam).name}`)).join('/')}`,
        pathParams,
        body,
        queryParams: queryParams(requestType, pathParams, body),
        requestType,
        responseType,
        streaming: Boolean(method.responseStream),
        match: compileMatcher(segments),
      });
    }
  }
  return routes;
}

/** The first route answering `method` on `path`, with its path variables. */
export function findRoute(routes: readonly HttpRoute[], method: string, path: string): { route: HttpRoute; params: Record<string, string> } | undefined {
  const wanted = method === 'HEAD' ? 'GET' : method;
  for (const route of routes) {
    if (route.method !== wanted) continue;
    const params = route.match(path);
    if (params !== undefined) return { route, params };
  }
  return undefined;
}

/** The methods some route answers on `path` (for the `Allow` header of a wrong-method answer). */
export function allowedMethods(routes: readonly HttpRoute[], path: string): HttpMethod[] {
  return [...new Set(routes.filter((r) => r.match(path) !== undefined).map((r) => r.method))].sort();
}

/**
 * What a plain GET (no WebSocket upgrade) of a streaming RPC's route is: the
 * recent items the stream would have carried, an operation of its own.
 */
export const PLAIN_GET_OPERATIONS: Readonly<Record<string, 'RecentMessages' | 'GetAgentLogs'>> = {
  SubscribeMessages: 'RecentMessages',
  FollowAgentLogs: 'GetAgentLogs',
};

/** The RPC a route serves as an operation: the stream over WebSocket, else its plain GET's operation for a streaming route. */
export function operationName(route: HttpRoute, upgrade: boolean): string {
  return route.streaming && !upgrade ? (PLAIN_GET_OPERATIONS[route.rpc] ?? route.rpc) : route.rpc;
}
