/**
 * Test collectors: real servers on 127.0.0.1 that accept OTLP trace exports
 * the way a collector does and keep the spans, flattened.
 * - OTLP/HTTP: POST /v1/traces, protobuf or JSON;
 * - OTLP/gRPC: TraceService/Export, protobuf.
 * Requests are decoded with the OTLP definitions themselves (otlp-decoder.ts).
 */
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import * as grpc from '@grpc/grpc-js';
import { attributesOf, decodeTraceRequest, type OtlpTraceRequest } from './otlp-decoder.js';
import { whenArrived } from './when-arrived.js';

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
  /** Resolves with every span received once `done` holds for them, checked at each arrival; rejects after `timeoutMs`. */
  waitUntil(done: (spans: readonly ReceivedSpan[]) => boolean, what: string, timeoutMs?: number): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

function flatten(request: OtlpTraceRequest): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const rs of request.resourceSpans ?? []) {
    const resource = attributesOf(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const span of ss.spans ?? []) {
        spans.push({
          traceId: span.traceId,
          spanId: span.spanId,
          parentSpanId: span.parentSpanId ?? '',
          name: span.name,
          kind: span.kind ?? 0,
          attributes: attributesOf(span.attributes),
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

function collector(url: string, close: () => Promise<void>) {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const arrivals = new Set<() => void>();
  const waitUntil = (done: (all: readonly ReceivedSpan[]) => boolean, what: string, timeoutMs = 10_000) =>
    whenArrived(arrivals, () => (done(spans) ? [...spans] : undefined), what, timeoutMs);
  const receiver: Receiver = {
    url,
    spans,
    contentTypes,
    waitForSpans: (count, timeoutMs = 5_000) => waitUntil((all) => all.length >= count, `${count} spans (got ${spans.length})`, timeoutMs),
    waitUntil,
    close,
  };
  const accept = (contentType: string, request: OtlpTraceRequest) => {
    contentTypes.push(contentType);
    spans.push(...flatten(request));
    for (const arrival of [...arrivals]) arrival();
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

/** Serves `path` with `onExport` on a free port of 127.0.0.1; resolves with `grpc://127.0.0.1:port` and a close. */
export async function startOtlpGrpcServer(path: string, onExport: (call: grpc.ServerUnaryCall<Buffer, Buffer>) => void): Promise<{ url: string; close(): Promise<void> }> {
  const server = new grpc.Server();
  server.addService(rawExportService(path), {
    Export: (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
      onExport(call);
      callback(null, Buffer.alloc(0));
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, bound) => (err ? reject(err) : resolve(bound))),
  );
  return { url: `grpc://127.0.0.1:${port}`, close: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())) };
}

export async function startHttpReceiver(): Promise<Receiver> {
  let accept: (contentType: string, request: OtlpTraceRequest) => void = () => undefined;
  const server = await startOtlpHttpServer(['/v1/traces'], ({ contentType, body }) => accept(contentType, decodeTraceRequest(body, contentType)));
  const made = collector(server.url, server.close);
  accept = made.accept;
  return made.receiver;
}

export async function startGrpcReceiver(): Promise<Receiver> {
  let accept: (contentType: string, request: OtlpTraceRequest) => void = () => undefined;
  const server = await startOtlpGrpcServer('/opentelemetry.proto.collector.trace.v1.TraceService/Export', (call) => accept('application/grpc', decodeTraceRequest(call.request)));
  const made = collector(server.url, server.close);
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

/** What a silent collector does: hold requests unanswered until `release`. */
export interface SilentCollector {
  readonly url: string;
  /** Resolves once it holds `count` requests (to `path`, when given). */
  holding(count?: number, path?: string, timeoutMs?: number): Promise<number>;
  /** Answers the requests it holds, and those to come, with success: an exporter then has nothing left to retry. */
  release(): void;
  close(): Promise<void>;
}

/** A collector that accepts requests and answers none until released. */
export async function startSilentCollector(): Promise<SilentCollector> {
  const paths: string[] = [];
  let released = false;
  const held: ServerResponse[] = [];
  const arrivals = new Set<() => void>();
  const answer = (res: ServerResponse) => res.writeHead(200, { 'Content-Type': 'application/x-protobuf' }).end();
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      paths.push(req.url ?? '');
      if (released) answer(res);
      else held.push(res);
      for (const arrival of [...arrivals]) arrival();
    });
  });
  return {
    url: `http://127.0.0.1:${await listenLoopback(server)}`,
    holding(count = 1, path, timeoutMs = 10_000) {
      const held = () => paths.filter((p) => path === undefined || p === path).length;
      return whenArrived(arrivals, () => (held() >= count ? held() : undefined), `${count} requests held${path === undefined ? '' : ` on ${path}`}`, timeoutMs);
    },
    release() {
      released = true;
      for (const res of held.splice(0)) answer(res);
    },
    close: () => closeHttp(server),
  };
}
