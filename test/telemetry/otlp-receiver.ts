/**
 * Test collectors: real servers on 127.0.0.1 that accept OTLP trace exports
 * the way a collector does and keep the spans, flattened.
 * - OTLP/HTTP: POST /v1/traces, protobuf (what svc sends, decoded with the
 *   declaration below) or JSON.
 * - OTLP/gRPC: TraceService/Export, protobuf.
 * The protobuf declaration is our own minimal subset of the OTLP trace
 * messages (opentelemetry-proto, trace/v1 and collector/trace/v1): only the
 * fields the tests read, with their field numbers; protobufjs skips the rest.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  resource: Record<string, unknown>;
  scope: string;
  /** 0 unset, 1 ok, 2 error. */
  statusCode: number;
  events: string[];
}

export interface Receiver {
  /** The endpoint to configure: http://127.0.0.1:port or grpc://127.0.0.1:port. */
  readonly url: string;
  readonly spans: ReceivedSpan[];
  readonly contentTypes: string[];
  /** Resolves once at least `count` spans arrived; rejects after `timeoutMs`. */
  waitForSpans(count: number, timeoutMs?: number): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

/** A field of a protobufjs JSON declaration. */
export const field = (type: string, id: number, rule?: 'repeated') => (rule === undefined ? { type, id } : { type, id, rule });

/** opentelemetry-proto's common messages (common/v1, resource/v1), as far as the tests read them; shared by the trace and metrics declarations. */
export const OTLP_COMMON_TYPES = {
  Resource: { fields: { attributes: field('KeyValue', 1, 'repeated') } },
  InstrumentationScope: { fields: { name: field('string', 1), version: field('string', 2) } },
  KeyValue: { fields: { key: field('string', 1), value: field('AnyValue', 2) } },
  AnyValue: {
    oneofs: { value: { oneof: ['stringValue', 'boolValue', 'intValue', 'doubleValue'] } },
    fields: { stringValue: field('string', 1), boolValue: field('bool', 2), intValue: field('int64', 3), doubleValue: field('double', 4) },
  },
};

const OTLP_TRACE_DECLARATION = {
  nested: {
    ...OTLP_COMMON_TYPES,
    ExportTraceServiceRequest: { fields: { resourceSpans: field('ResourceSpans', 1, 'repeated') } },
    ResourceSpans: { fields: { resource: field('Resource', 1), scopeSpans: field('ScopeSpans', 2, 'repeated') } },
    ScopeSpans: { fields: { scope: field('InstrumentationScope', 1), spans: field('Span', 2, 'repeated') } },
    Span: {
      fields: {
        traceId: field('bytes', 1),
        spanId: field('bytes', 2),
        parentSpanId: field('bytes', 4),
        name: field('string', 5),
        kind: field('int32', 6),
        attributes: field('KeyValue', 9, 'repeated'),
        events: field('Event', 11, 'repeated'),
        status: field('Status', 15),
      },
    },
    Event: { fields: { name: field('string', 2) } },
    Status: { fields: { message: field('string', 2), code: field('int32', 3) } },
  },
};

const ExportRequest = protobuf.Root.fromJSON(OTLP_TRACE_DECLARATION).lookupType('ExportTraceServiceRequest');

/** The request in the OTLP/JSON shape, whichever encoding it came in. */
interface OtlpKeyValue {
  key: string;
  value?: { stringValue?: string; boolValue?: boolean; intValue?: string | number; doubleValue?: number };
}
interface OtlpRequest {
  resourceSpans?: {
    resource?: { attributes?: OtlpKeyValue[] };
    scopeSpans?: {
      scope?: { name?: string };
      spans?: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind?: number;
        attributes?: OtlpKeyValue[];
        events?: { name: string }[];
        status?: { code?: number };
      }[];
    }[];
  }[];
}

function attributes(list: OtlpKeyValue[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { key, value } of list ?? []) {
    if (value === undefined) continue;
    out[key] = value.stringValue ?? value.boolValue ?? (value.intValue !== undefined ? Number(value.intValue) : value.doubleValue);
  }
  return out;
}

function flatten(request: OtlpRequest): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const rs of request.resourceSpans ?? []) {
    const resource = attributes(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const span of ss.spans ?? []) {
        spans.push({
          traceId: span.traceId,
          spanId: span.spanId,
          parentSpanId: span.parentSpanId ?? '',
          name: span.name,
          kind: span.kind ?? 0,
          attributes: attributes(span.attributes),
          resource,
          scope: ss.scope?.name ?? '',
          statusCode: span.status?.code ?? 0,
          events: (span.events ?? []).map((e) => e.name),
        });
      }
    }
  }
  return spans;
}

function decodeProtobuf(body: Uint8Array): OtlpRequest {
  // Bytes become hex, as OTLP/JSON writes ids; 64-bit integers become strings.
  const object = ExportRequest.toObject(ExportRequest.decode(body), { longs: String, bytes: Array, defaults: false, oneofs: false });
  const hex = (value: unknown) => (Array.isArray(value) ? Buffer.from(value as number[]).toString('hex') : '');
  const request = object as OtlpRequest;
  for (const rs of request.resourceSpans ?? []) {
    for (const ss of rs.scopeSpans ?? []) {
      for (const span of ss.spans ?? []) {
        span.traceId = hex(span.traceId);
        span.spanId = hex(span.spanId);
        span.parentSpanId = hex(span.parentSpanId);
      }
    }
  }
  return request;
}

function collector(url: string, close: () => Promise<void>) {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const waiters = new Set<() => void>();
  const receiver: Receiver = {
    url,
    spans,
    contentTypes,
    waitForSpans(count, timeoutMs = 5_000) {
      if (spans.length >= count) return Promise.resolve(spans);
      return new Promise((resolve, reject) => {
        const check = () => {
          if (spans.length < count) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(spans);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`expected ${count} spans within ${timeoutMs} ms, got ${spans.length}`));
        }, timeoutMs);
        waiters.add(check);
      });
    },
    close,
  };
  const accept = (contentType: string, request: OtlpRequest) => {
    contentTypes.push(contentType);
    spans.push(...flatten(request));
    for (const waiter of [...waiters]) waiter();
  };
  return { receiver, accept };
}

/** Listens on a free port of 127.0.0.1; resolves with the port. */
async function listenLoopback(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  return address.port;
}

export function closeHttp(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

export interface OtlpPost {
  path: string;
  contentType: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/**
 * An OTLP/HTTP endpoint on 127.0.0.1: each POST to one of `paths` goes to
 * `onExport` and is answered with an empty Export*ServiceResponse (full
 * success) in the request's encoding; anything else is 404.
 */
export async function startOtlpHttpServer(paths: readonly string[], onExport: (post: OtlpPost) => void): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url === undefined || !paths.includes(req.url)) {
        res.writeHead(404).end();
        return;
      }
      const contentType = req.headers['content-type'] ?? '';
      onExport({ path: req.url, contentType, headers: req.headers, body: Buffer.concat(chunks) });
      const json = contentType.startsWith('application/json');
      res.writeHead(200, { 'Content-Type': json ? 'application/json' : 'application/x-protobuf' }).end(json ? '{}' : undefined);
    });
  });
  return { url: `http://127.0.0.1:${await listenLoopback(server)}`, close: () => closeHttp(server) };
}

/** A unary gRPC method that passes raw bytes both ways: an OTLP `Export`, decoded by the test. */
export function rawExportService(path: string): grpc.ServiceDefinition {
  return {
    Export: {
      path,
      requestStream: false,
      responseStream: false,
      requestSerialize: (value: Buffer) => value,
      requestDeserialize: (bytes: Buffer) => bytes,
      responseSerialize: (value: Buffer) => value,
      responseDeserialize: (bytes: Buffer) => bytes,
    },
  };
}

export async function startHttpReceiver(): Promise<Receiver> {
  let accept: (contentType: string, request: OtlpRequest) => void = () => undefined;
  const server = await startOtlpHttpServer(['/v1/traces'], ({ contentType, body }) => {
    accept(contentType, contentType.startsWith('application/json') ? (JSON.parse(body.toString('utf8')) as OtlpRequest) : decodeProtobuf(body));
  });
  const made = collector(server.url, server.close);
  accept = made.accept;
  return made.receiver;
}

const TRACE_SERVICE = rawExportService('/opentelemetry.proto.collector.trace.v1.TraceService/Export');

export async function startGrpcReceiver(): Promise<Receiver> {
  const server = new grpc.Server();
  let accept: (contentType: string, request: OtlpRequest) => void = () => undefined;
  server.addService(TRACE_SERVICE, {
    Export: (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
      accept('application/grpc', decodeProtobuf(call.request));
      callback(null, Buffer.alloc(0));
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, bound) => (err ? reject(err) : resolve(bound))),
  );
  const made = collector(`grpc://127.0.0.1:${port}`, () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())));
  accept = made.accept;
  return made.receiver;
}

/** A TCP port nothing listens on: bound once, then closed. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  const port = await listenLoopback(server);
  await closeHttp(server);
  return port;
}

/** A collector that accepts connections and never answers. */
export async function startSilentCollector(): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer(() => undefined);
  return { url: `http://127.0.0.1:${await listenLoopback(server)}`, close: () => closeHttp(server) };
}

/** One request a held collector received: its `resource_spans` entries and spans. */
export interface HeldRequest {
  resourceSpans: number;
  spans: number;
}

/**
 * A slow OTLP/HTTP collector: it answers nothing until `release()`, which
 * answers every open request and those arriving afterwards at once. It
 * records each request and the most it held open at a time.
 */
export async function startHeldCollector(): Promise<{
  url: string;
  requests: HeldRequest[];
  mostOpen(): number;
  /** Resolves once `count` requests are open (unanswered); rejects after `timeoutMs`. */
  waitForOpen(count: number, timeoutMs?: number): Promise<void>;
  release(): void;
  close(): Promise<void>;
}> {
  const requests: HeldRequest[] = [];
  let open: (() => void)[] = [];
  let most = 0;
  let released = false;
  const waiters = new Set<() => void>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = decodeProtobuf(Buffer.concat(chunks));
      const entries = request.resourceSpans ?? [];
      requests.push({ resourceSpans: entries.length, spans: flatten(request).length });
      const answer = () => res.writeHead(200, { 'Content-Type': 'application/x-protobuf' }).end();
      if (released) return answer();
      open.push(answer);
      most = Math.max(most, open.length);
      for (const waiter of [...waiters]) waiter();
    });
  });
  const port = await listenLoopback(server);
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    mostOpen: () => most,
    waitForOpen(count, timeoutMs = 10_000) {
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`${open.length} requests open, not ${count}, after ${timeoutMs} ms`));
        }, timeoutMs);
        function check(): void {
          if (open.length < count) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        }
        waiters.add(check);
        check();
      });
    },
    release() {
      released = true;
      const answers = open;
      open = [];
      for (const answer of answers) answer();
    },
    close: () => closeHttp(server),
  };
}
