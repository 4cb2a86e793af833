/**
 * The OpenAPI 3.1 document of the REST gateway, generated from the same route
 * table the router serves and from the message descriptors: a schema per
 * message of the package, and per route its parameters, body and responses
 * (errors included). Nothing here restates a field or a path by hand; the
 * only additions are value lists the proto states in comments (performatives,
 * agent states), taken from the code that enforces them.
 */
import protobuf from 'protobufjs';
import { AGENT_STATES } from '../../agents/agent-service-types.js';
import { PERFORMATIVES } from '../../bus/performatives.js';
import type { RpcBinding } from './rpc-bindings.js';
import type { HttpRoute, PathParam } from './routes.js';

type Schema = Record<string, unknown>;
export type OpenApiDocument = Record<string, unknown> & { paths: Record<string, Record<string, Schema>> };

export interface OpenApiOptions {
  version: string;
  /** The success status and list shape of each RPC. */
  bindingFor(route: HttpRoute): Pick<RpcBinding, 'status' | 'list'>;
}

/** Closed value sets the proto can only describe in a comment, from the code that enforces them. */
const VALUE_SETS: Readonly<Record<string, readonly string[]>> = {
  'svc.v1.Message.message_type': PERFORMATIVES,
  'svc.v1.MessageFilter.message_types': PERFORMATIVES,
  'svc.v1.Agent.state': AGENT_STATES,
};

const ERROR_RESPONSES: Readonly<Record<string, { status: string; description: string }>> = {
  InvalidArgument: { status: '400', description: 'INVALID_ARGUMENT: malformed JSON, a wrong type, an unknown field, a bad value or Content-Type.' },
  NotFound: { status: '404', description: 'NOT_FOUND: no such agent.' },
  PayloadTooLarge: { status: '413', description: 'PAYLOAD_TOO_LARGE: the body, the module or the content is over its limit.' },
  InvalidModule: { status: '422', description: 'INVALID_MODULE: the module breaks the Agent ABI; metadata names what was rejected.' },
  Failure: { status: 'default', description: 'Any other failure of the error table (429, 503, 504, 500, ...).' },
};

function stripDot(name: string): string {
  return name.startsWith('.') ? name.slice(1) : name;
}

/** Every message type of the service's package, nested ones included (map entries are not messages on the wire). */
function packageTypes(service: protobuf.Service): protobuf.Type[] {
  const types: protobuf.Type[] = [];
  const visit = (ns: protobuf.NamespaceBase): void => {
    for (const item of ns.nestedArray) {
      if (item instanceof protobuf.Type) types.push(item);
      if (item instanceof protobuf.Namespace || item instanceof protobuf.Type) visit(item);
    }
  };
  visit(service.parent as protobuf.NamespaceBase);
  return types;
}

/** An operation's summary: the first sentence of its comment, which may run over several lines. */
function firstSentence(comment: string): string {
  const text = comment.replace(/\s*\n\s*/g, ' ');
  return /^.*?\.(?=\s|$)/.exec(text)?.[0] ?? text;
}

function describe(target: Schema, comment: string | null | undefined): Schema {
  if (comment) target.description = comment.replace(/\s*\n\s*/g, ' ');
  return target;
}

function createSchemas(types: readonly protobuf.Type[]) {
  const count = new Map<string, number>();
  for (const t of types) count.set(t.name, (count.get(t.name) ?? 0) + 1);
  const nameOf = (t: protobuf.Type): string => (count.get(t.name) === 1 ? t.name : stripDot(t.fullName).replaceAll('.', '_'));
  const ref = (t: protobuf.Type): Schema => ({ $ref: `#/components/schemas/${nameOf(t)}` });

  function single(field: protobuf.Field): Schema {
    const nested = field.resolvedType;
    if (nested instanceof protobuf.Type) return ref(nested);
    if (nested instanceof protobuf.Enum) return { type: 'string', enum: Object.keys(nested.values) };
    const values = VALUE_SETS[stripDot(field.fullName)];
    switch (field.type) {
      case 'string':
        return values ? { type: 'string', enum: [...values] } : { type: 'string' };
      case 'bytes':
        return { type: 'string', contentEncoding: 'base64' };
      case 'bool':
        return { type: 'boolean' };
      case 'double':
      case 'float':
        return { type: 'number', format: field.type };
      case 'uint32':
      case 'fixed32':
        return { type: 'integer', format: 'int64', minimum: 0, maximum: 2 ** 32 - 1 };
      case 'uint64':
      case 'fixed64':
        return { type: 'integer', format: 'int64', minimum: 0, maximum: Number.MAX_SAFE_INTEGER };
      case 'int64':
      case 'sint64':
      case 'sfixed64':
        return { type: 'integer', format: 'int64' };
      default:
        return { type: 'integer', format: 'int32' };
    }
  }

  function fieldSchema(field: protobuf.Field): Schema {
    const item = single(field);
    if (field.map) return describe({ type: 'object', additionalProperties: item }, field.comment);
    if (field.repeated) return describe({ type: 'array', items: item }, field.comment);
    // A $ref with siblings is allowed in 3.1, so the field keeps its own description.
    return describe({ ...item }, field.comment);
  }

  function messageSchema(type: protobuf.Type): Schema {
    const properties = Object.fromEntries(type.fieldsArray.map((f) => [f.name, fieldSchema(f)]));
    return describe({ type: 'object', properties, additionalProperties: false }, type.comment);
  }

  return { nameOf, ref, single, fieldSchema, messageSchema };
}

function segmentsOf(template: string): string[] {
  return template.slice(1).split('/');
}

/**
 * OpenAPI forbids two paths that differ only in variable names, so a variable
 * takes the name its parent resource gives the same position
 * (`/agents/{agent_id}` names `/agents/{message.receiver}/messages` too); with
 * no parent, its own leaf field name.
 */
function openApiPath(route: HttpRoute, routes: readonly HttpRoute[]): { path: string; names: Map<PathParam, string> } {
  const mine = segmentsOf(route.template);
  const names = new Map<PathParam, string>();
  let param = 0;
  const parts = mine.map((segment, i) => {
    if (!segment.startsWith('{')) return segment;
    const own = route.pathParams[param++] as PathParam;
    const parent = routes.find((r) => {
      const theirs = segmentsOf(r.template);
      return theirs.length === i + 1 && theirs[i]?.startsWith('{') && theirs.slice(0, i).every((s, j) => s === mine[j]);
    });
    const name = parent ? (parent.pathParams[parent.pathParams.length - 1] as PathParam).field.name : own.field.name;
    names.set(own, name);
    return `{${name}}`;
  });
  return { path: `/${parts.join('/')}`, names };
}

function hasBytes(type: protobuf.Type, seen = new Set<protobuf.Type>()): boolean {
  seen.add(type);
  return type.fieldsArray.some((f) => f.type === 'bytes' || (f.resolvedType instanceof protobuf.Type && !seen.has(f.resolvedType) && hasBytes(f.resolvedType, seen)));
}

const errorRef = (name: string): Schema => ({ $ref: `#/components/responses/${name}` });

export function buildOpenApi(service: protobuf.Service, routes: readonly HttpRoute[], options: OpenApiOptions): OpenApiDocument {
  const types = packageTypes(service);
  const schemas = createSchemas(types);
  const methods = new Map(service.methodsArray.map((m) => [m.name, m]));
  const paths: OpenApiDocument['paths'] = {};

  for (const route of routes) {
    const { path, names } = openApiPath(route, routes);
    const binding = options.bindingFor(route);
    const rpc = methods.get(route.rpc);
    const comment = rpc?.comment?.trim();
    const parameters: Schema[] = [
      { $ref: '#/components/parameters/TraceId' },
      ...route.pathParams.map((p) => ({
        name: names.get(p),
        in: 'path',
        required: true,
        description: `Fills ${p.path.join('.')}.`,
        schema: schemas.single(p.field),
      })),
      ...route.queryParams.map((q) => {
        const schema = schemas.fieldSchema(q.field);
        const base = { name: q.name, in: 'query', required: false, schema };
        // Repeated values travel comma-separated (`?message_types=inform,request`).
        return q.field.repeated ? { ...base, style: 'form', explode: false } : base;
      }),
    ];
    const resultSchema = binding.list
      ? { type: 'object', properties: { [binding.list]: { type: 'array', items: schemas.ref(route.responseType) } }, required: [binding.list] }
      : schemas.ref(route.responseType);
    const responses: Record<string, Schema> = {
      [String(binding.status)]: {
        description: binding.list ? `Recent ${route.responseType.name} values, oldest first.` : `${route.responseType.name}.`,
        content: { 'application/json': { schema: resultSchema } },
      },
      '400': errorRef('InvalidArgument'),
    };
    if (route.streaming) {
      responses['101'] = { description: `Switching Protocols (WebSocket): one ${route.responseType.name} as JSON per text frame.` };
    }
    if (route.pathParams.length > 0) responses['404'] = errorRef('NotFound');
    if (route.body !== undefined) responses['413'] = errorRef('PayloadTooLarge');
    if (hasBytes(route.requestType)) responses['422'] = errorRef('InvalidModule');
    responses.default = errorRef('Failure');

    const operation: Schema = {
      operationId: route.operationId,
      tags: [service.name],
      summary: comment === undefined || comment === '' ? route.rpc : firstSentence(comment),
      parameters,
      responses,
    };
    if (comment) operation.description = `${comment.replace(/\s*\n\s*/g, ' ')} (RPC ${service.name}.${route.rpc})`;
    if (route.body !== undefined) {
      const bodySchema = route.body === '*' ? schemas.ref(route.requestType) : schemas.fieldSchema(route.requestType.fields[route.body] as protobuf.Field);
      operation.requestBody = { required: true, content: { 'application/json': { schema: bodySchema } } };
    }
    (paths[path] ??= {})[route.method.toLowerCase()] = operation;
  }

  const errorSchema = { content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
  return {
    openapi: '3.1.0',
    info: {
      title: 'svc management API',
      version: options.version,
      description:
        'REST/JSON gateway of svc.v1.ManagementService, derived from proto/svc/v1/management.proto. Field names are snake_case; ' +
        'requests also accept lowerCamelCase. bytes are base64. Every error is an Error body with the status of the error table. ' +
        'GET on the messages paths and on an agent\'s logs/follow path upgrades to a WebSocket stream.',
    },
    tags: [{ name: service.name, description: describe({}, service.comment).description ?? 'Agent management.' }],
    paths,
    components: {
      schemas: Object.fromEntries(types.map((t) => [schemas.nameOf(t), schemas.messageSchema(t)])),
      parameters: {
        TraceId: {
          name: 'X-Trace-Id',
          in: 'header',
          required: false,
          description: 'The trace id of this call: a W3C trace id (32 hex digits) names the trace; any value of 1 to 128 visible ASCII characters is echoed as sent in the X-Trace-Id response header, every error body and Health.',
          schema: { type: 'string', pattern: '^[!-~]{1,128}$' },
        },
      },
      responses: Object.fromEntries(Object.entries(ERROR_RESPONSES).map(([name, r]) => [name, { description: r.description, ...errorSchema }])),
    },
  };
}

