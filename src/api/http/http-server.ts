/**
 * The HTTP listener (server.http_addr): the Koa gateway, WebSocket streams on
 * its `upgrade` event, the probes, and the connection limits of the server
 * section. Routes and the OpenAPI document are derived from the schema here,
 * once, at creation. Every connection is counted (open connections and the
 * bytes it moves); every request is traced, counted and logged (http-call.ts).
 */
import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import { createRealClock, type Clock } from '../../../supervisors/index.js';
import type { AgentService } from '../../agents/agent-service-types.js';
import type { Config } from '../../config/schema.js';
import type { Security } from '../../security/security.js';
import type { OcspStapler } from '../../security/tls/ocsp-stapler.js';
import type { TlsMaterial } from '../../security/tls/tls-material.js';
import type { Logger } from '../../telemetry/logger.js';
import type { Metrics } from '../../telemetry/metrics.js';
import type { Tracing } from '../../telemetry/tracing.js';
import { VERSION } from '../../version.js';
import { untracedTracing, type DoorTelemetry } from '../api-call.js';
import { listenOn, splitAddress } from '../host-port.js';
import { loadManagementProto } from '../proto.js';
import { bindingFor } from './api-router.js';
import { answerClientErrors } from './client-errors.js';
import { createGatewayApp } from './gateway-app.js';
import { buildOpenApi, type OpenApiDocument } from './openapi.js';
import type { Readiness } from './probes.js';
import { deriveRoutes, type HttpRoute } from './routes.js';
import { websocketAdmission } from './websocket-admission.js';
import { createWebSocketGateway } from './websocket-gateway.js';

/** Room in a deploy body beside the base64 module: name, capabilities, resources and JSON punctuation. */
export const BODY_ENVELOPE_BYTES = 64 * 1024;
/** Unsent bytes per WebSocket above which writes wait for the socket; with the sink's buffer, the most a stalled client holds. */
export const WS_HIGH_WATER_MARK_BYTES = 256 * 1024;
/** How long stop() lets in-flight requests finish before cutting their connections. */
export const DRAIN_GRACE_MS = 5_000;
/** Node checks header and request timeouts on this period; a quarter of the shorter timeout keeps the overrun under 25 %. */
const MAX_CHECK_INTERVAL_MS = 30_000;
const MIN_CHECK_INTERVAL_MS = 100;

export interface HttpServerOptions {
  /** `host:port`; port 0 binds an ephemeral port. */
  address: string;
  maxConnections: number;
  /** Time a connection has to send a request's headers (Node's headersTimeout). */
  connectionTimeoutMs: number;
  /** Time a whole request may take: its receipt (Node's requestTimeout) and its answer (DEADLINE_EXCEEDED). */
  requestTimeoutMs: number;
  /** Idle time before a kept-alive connection closes; WebSocket pings come at half of it. */
  keepAliveTimeoutMs: number;
  /** runtime.max_module_size: the body limit is its base64 size plus an envelope. */
  maxModuleSize: number;
  /** Whether the store, executors and other listeners are up; /ready adds this listener and draining. */
  readiness?: () => Readiness;
  log?: Logger;
  /** The server's tracer (`server.tracing`); without it requests still get trace ids, from a tracer that records nothing. */
  tracing?: Tracing;
  /** The server's metrics (`server.metrics`); without them nothing is counted. */
  metrics?: Metrics;
  wsHighWaterMarkBytes?: number;
  /** The security steps and endpoints; without them every caller is `anonymous` and the security endpoints answer UNAVAILABLE. */
  security?: Security;
  /** Serve HTTPS with this certificate, followed across reloads. */
  tls?: TlsMaterial;
  /** Staple its responses (with `tls`). */
  ocsp?: OcspStapler;
  /** Every timer of the listener (request deadlines, WebSocket pings and close grace, the stop grace); the real clock by default. */
  clock?: Clock;
}

export interface HttpServer {
  /** Binds and resolves with the bound address (`127.0.0.1:39117`). */
  start(): Promise<string>;
  /**
   * Marks the listener draining, still serving: /ready answers 503 and new
   * WebSocket upgrades are refused, so load balancers move away before stop().
   */
  drain(): void;
  /** Drains, then: no new connections, streams close (1001), in-flight requests finish or are cut after DRAIN_GRACE_MS. */
  stop(): Promise<void>;
  readonly address: string | undefined;
  readonly routes: readonly HttpRoute[];
  readonly openApiDocument: OpenApiDocument;
  /** Open WebSocket streams. */
  readonly streams: number;
}

export function bodyLimitFor(maxModuleSize: number): number {
  return 4 * Math.ceil(maxModuleSize / 3) + BODY_ENVELOPE_BYTES;
}

/** The listener's options from the configuration; `readiness` and the telemetry come from the composition root. */
export function httpServerOptionsFrom(config: Config, extra: Pick<HttpServerOptions, 'readiness' | 'log' | 'tracing' | 'metrics' | 'security' | 'tls' | 'ocsp' | 'clock'> = {}): HttpServerOptions {
  const { server, runtime } = config;
  return {
    address: server.http_addr,
    maxConnections: server.max_connections,
    connectionTimeoutMs: server.connection_timeout,
    requestTimeoutMs: server.request_timeout,
    keepAliveTimeoutMs: server.keepalive_timeout,
    maxModuleSize: runtime.max_module_size,
    ...extra,
  };
}

function applyLimits(server: Server, options: HttpServerOptions): void {
  server.maxConnections = options.maxConnections;
  // Node refuses headersTimeout above requestTimeout; the request bound covers the headers anyway.
  server.requestTimeout = options.requestTimeoutMs;
  server.headersTimeout = Math.min(options.connectionTimeoutMs, options.requestTimeoutMs);
  server.keepAliveTimeout = options.keepAliveTimeoutMs;
}

export function createHttpServer(service: AgentService, options: HttpServerOptions): HttpServer {
  const proto = loadManagementProto();
  const routes = deriveRoutes(proto.service);
  const openApiDocument = buildOpenApi(proto.service, routes, { version: VERSION, bindingFor: (route) => bindingFor(route) });
  const listenAddress = options.address;
  // A malformed address fails here, at creation, not later at start().
  splitAddress(listenAddress);
  const telemetry: DoorTelemetry = { tracing: options.tracing ?? untracedTracing(), metrics: options.metrics, log: options.log };
  const clock = options.clock ?? createRealClock();
  let address: string | undefined;
  let draining = false;
  let stopping: Promise<void> | undefined;

  const readiness = (): Readiness => {
    if (draining) return { ready: false, reason: 'draining' };
    if (address === undefined) return { ready: false, reason: 'starting' };
    return options.readiness?.() ?? { ready: true };
  };
  const app = createGatewayApp(service, {
    routes,
    openApiDocument,
    requestTimeoutMs: options.requestTimeoutMs,
    bodyLimitBytes: bodyLimitFor(options.maxModuleSize),
    readiness,
    telemetry,
    clock,
    ...(options.security === undefined ? {} : { security: options.security }),
  });
  const streams = createWebSocketGateway(service, proto.messageType('Message'), {
    logLineType: proto.messageType('AgentLogLine'),
    routes: routes.filter((r) => r.streaming && r.method === 'GET'),
    pingIntervalMs: Math.max(1, Math.floor(options.keepAliveTimeoutMs / 2)),
    highWaterMarkBytes: options.wsHighWaterMarkBytes ?? WS_HIGH_WATER_MARK_BYTES,
    accepting: () => !draining,
    telemetry,
    clock,
    ...(options.security === undefined ? {} : { admit: websocketAdmission(options.security) }),
  });

  const shorter = Math.min(options.connectionTimeoutMs, options.requestTimeoutMs);
  const httpOptions = {
    connectionsCheckingInterval: Math.min(MAX_CHECK_INTERVAL_MS, Math.max(MIN_CHECK_INTERVAL_MS, Math.floor(shorter / 4))),
    // Node would refuse a request without Host with a bare 400; middleware-request-target.ts refuses it with an Error body.
    requireHostHeader: false,
  };
  const { tls, ocsp } = options;
  const server: Server = tls === undefined ? createServer(httpOptions, app.callback()) : createHttpsServer({ ...httpOptions, ...tls.serverOptions() }, app.callback());
  if (tls !== undefined) {
    const secure = server as ReturnType<typeof createHttpsServer>;
    tls.onReload(() => secure.setSecureContext(tls.contextOptions()));
    // A client that asks gets the stapled status; null lets it check for itself.
    if (ocsp !== undefined) secure.on('OCSPRequest', (_cert: Buffer, _issuer: Buffer, done: (err: Error | null, response: Buffer | null) => void) => done(null, ocsp.response() ?? null));
  }
  applyLimits(server, options);
  answerClientErrors(server, options.log);
  server.on('upgrade', streams.handleUpgrade);
  const { metrics } = options;
  if (metrics !== undefined) server.on('connection', (socket: Socket) => metrics.trackConnection(socket));
  server.on('drop', (data?: { remoteAddress?: string }) => options.log?.warn({ remote: data?.remoteAddress, max_connections: options.maxConnections }, 'connection refused: max_connections reached'));

  return {
    routes,
    openApiDocument,
    get address() {
      return address;
    },
    get streams() {
      return streams.clients;
    },
    async start() {
      address = await listenOn(server, listenAddress);
      return address;
    },
    drain() {
      draining = true;
    },
    stop() {
      stopping ??= (async () => {
        draining = true;
        if (!server.listening) return;
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        await streams.close();
        const cut = clock.setTimeout(() => server.closeAllConnections(), DRAIN_GRACE_MS);
        await closed;
        clock.clearTimeout(cut);
      })();
      return stopping;
    },
  };
}
