/**
 * The server's doors: the gRPC listener, the HTTP listener (REST gateway,
 * WebSocket streams, API docs, /health and /ready) and the metrics listener,
 * all calling the one `AgentService`, the API listeners behind the server's
 * security steps and, with `tls_cert_file`, over TLS. `svc start` binds them
 * while the services start (`StartOptions.whileStarting`), so /ready answers
 * 503 (starting) rather than the port refusing; drained and stopped before
 * the services stop.
 */
import type { Config } from './config/schema.js';
import { createGrpcServer, type GrpcServer } from './api/grpc/grpc-server.js';
import { grpcServerOptionsFrom } from './api/grpc/grpc-server-options.js';
import { createHttpServer, httpServerOptionsFrom, type HttpServer } from './api/http/http-server.js';
import { createMetricsServer, type MetricsServer } from './api/http/metrics-server.js';
import type { Readiness } from './api/http/probes.js';
import { clusterServiceDefinition } from './cluster/cluster-proto.js';
import { authSummary } from './security/auth-summary.js';
import { createOcspStapler, type OcspStapler } from './security/tls/ocsp-stapler.js';
import { createTlsMaterial, tlsSettingsFrom, type TlsMaterial } from './security/tls/tls-material.js';
import type { Server } from './server.js';
import type { Logger } from './telemetry/logger.js';

export interface ListenerAddresses {
  http: string;
  grpc: string;
  metrics: string | null;
}

export interface Listeners {
  readonly addresses: ListenerAddresses;
  /** The certificate both API listeners serve, when TLS is on. */
  readonly tls: TlsMaterial | undefined;
  /** The OCSP responses the HTTPS listener staples, with `enable_ocsp_stapling`. */
  readonly ocsp: OcspStapler | undefined;
  /**
   * /ready answers 503, new WebSocket streams are refused, and the gRPC
   * listener stops (its streams end with UNAVAILABLE while the bus is still
   * open); the HTTP and metrics listeners keep serving while the agents drain.
   */
  drain(): Promise<void>;
  /** Stops accepting, ends streams, lets in-flight calls finish briefly. Idempotent. */
  stop(): Promise<void>;
}

/** Unary calls in flight get this long to finish once the listeners stop. */
export const LISTENER_GRACE_MS = 5_000;

export async function startListeners(server: Server, config: Config, log: Logger): Promise<Listeners> {
  let bound = false;
  let draining = false;
  const readiness = (): Readiness => {
    if (draining) return { ready: false, reason: 'draining' };
    if (!bound || !server.started) return { ready: false, reason: 'starting' };
    if (server.host() === undefined) return { ready: false, reason: 'agents not running' };
    const storage = server.storage();
    if (storage === undefined) return { ready: false, reason: 'store closed' };
    if (!storage.writable) return { ready: false, reason: storage.reason ?? 'store cannot write' };
    return { ready: true };
  };

  // Both doors trace, count and log with the server's own tracer and registry, the one the metrics listener serves.
  const telemetry = { log, tracing: server.tracing, metrics: server.metrics, clock: server.clock };
  const tlsSettings = tlsSettingsFrom(config.security);
  const tls: TlsMaterial | undefined = tlsSettings === undefined ? undefined : createTlsMaterial(tlsSettings, { clock: server.clock, log });
  const ocsp: OcspStapler | undefined = tls !== undefined && config.security.enable_ocsp_stapling ? createOcspStapler(tls, { clock: server.clock, log }) : undefined;
  const secured = { security: server.security, ...(tls === undefined ? {} : { tls }) };
  const services = server.cluster === undefined ? [] : [{ definition: clusterServiceDefinition(), implementation: server.cluster.implementation, endStreams: server.cluster.endStreams }];
  const grpc: GrpcServer = createGrpcServer(server.service, { ...grpcServerOptionsFrom(config), ...telemetry, readiness, ...secured, services });
  const http: HttpServer = createHttpServer(server.service, httpServerOptionsFrom(config, { readiness, ...telemetry, ...secured, ...(ocsp === undefined ? {} : { ocsp }) }));
  const closeTls = (): void => {
    ocsp?.close();
    tls?.close();
  };
  const metrics: MetricsServer | undefined = config.observability.enable_metrics
    ? createMetricsServer(server.metrics.registry, { address: config.server.metrics_addr, maxConnections: config.server.max_connections, log })
    : undefined;

  const started: Array<{ stop(): Promise<void> }> = [];
  try {
    const grpcAddress = await grpc.start();
    const stopGrpc = () => grpc.stop(LISTENER_GRACE_MS);
    started.push({ stop: stopGrpc });
    const httpAddress = await http.start();
    started.push(http);
    const metricsAddress = metrics === undefined ? null : await metrics.start();
    if (metrics !== undefined) started.push(metrics);
    bound = true;
    started.push({ stop: async () => closeTls() });
    log.info({ auth: server.security.enabled, mechanisms: server.security.mechanisms, tls: tls !== undefined }, authSummary(server.security, tls !== undefined));

    let stopping: Promise<void> | undefined;
    return {
      addresses: { http: httpAddress, grpc: grpcAddress, metrics: metricsAddress },
      tls,
      ocsp,
      drain() {
        draining = true;
        http.drain();
        return stopGrpc();
      },
      stop() {
        draining = true;
        stopping ??= Promise.all(started.map((s) => s.stop())).then(() => undefined);
        return stopping;
      },
    };
  } catch (err) {
    // A listener that cannot bind (address in use) must not leave the others open.
    await Promise.allSettled(started.map((s) => s.stop()));
    closeTls();
    throw err;
  }
}
