/**
 * The gRPC door: `svc.v1.ManagementService` over grpc-js, with server
 * reflection (v1 and v1alpha, serving the files of grpc-reflection-files.ts)
 * and the standard health service (grpc-health-service.ts),
 * behind our own TCP listener that enforces the connection limits (see
 * grpc-connection-limit.ts), every call traced, counted and logged by one
 * interceptor (grpc-telemetry-interceptor.ts) and checked by the security
 * interceptors after it, in DESIGN.md section 9's order; a call to a method
 * it does not have gets the error trailer too (grpc-unknown-method.ts);
 * requests are checked strictly before they are decoded
 * (grpc-strict-decode.ts). With TLS material it serves gRPC over TLS,
 * following certificate reloads.
 */
import { Server, ServerCredentials, loadPackageDefinition, type ServiceDefinition, type UntypedServiceImplementation } from '@grpc/grpc-js';
import { createRealClock, type Clock } from '../../../supervisors/index.js';
import type { AgentService } from '../../agents/agent-service-types.js';
import { SvcError } from '../../errors/svc-error.js';
import type { Security } from '../../security/security.js';
import { grpcTlsCredentials } from '../../security/tls/grpc-tls-credentials.js';
import type { TlsMaterial } from '../../security/tls/tls-material.js';
import type { Logger } from '../../telemetry/logger.js';
import type { Metrics } from '../../telemetry/metrics.js';
import { newTraceId } from '../../telemetry/trace-ids.js';
import type { Tracing } from '../../telemetry/tracing.js';
import { untracedTracing } from '../api-call.js';
import { joinAddress, splitAddress } from '../host-port.js';
import { loadManagementProto, MANAGEMENT_SERVICE_NAME } from '../proto.js';
import { auditInterceptor } from './grpc-audit-interceptor.js';
import { authenticateInterceptor } from './grpc-authenticate-interceptor.js';
import { authorizeInterceptor } from './grpc-authorize-interceptor.js';
import { createConnectionLimiter } from './grpc-connection-limit.js';
import { toGrpcStatus } from './grpc-errors.js';
import { createManagementHandlers } from './grpc-handlers.js';
import { createHealthService } from './grpc-health-service.js';
import { lockdownInterceptor } from './grpc-lockdown-interceptor.js';
import { rateLimitInterceptor } from './grpc-rate-limit-interceptor.js';
import { withStrictDecoding } from './grpc-strict-decode.js';
import { managementReflectionService } from './grpc-reflection-files.js';
import { securedCallInterceptor } from './grpc-secured-call-interceptor.js';
import { channelOptionsFor, type GrpcServerOptions } from './grpc-server-options.js';
import { sourceBlockInterceptor } from './grpc-source-block-interceptor.js';
import { telemetryInterceptor } from './grpc-telemetry-interceptor.js';
import { answerUnknownMethods } from './grpc-unknown-method.js';

/** Time in-flight calls get to finish at stop before their connections are cut. */
export const STOP_GRACE_MS = 5_000;

export interface GrpcServer {
  /** Binds the listener; resolves with the bound `host:port`. */
  start(): Promise<string>;
  /**
   * Stops accepting, ends open streams with UNAVAILABLE (releasing their
   * subscriptions), lets unary calls finish for up to `graceMs`, then cuts
   * what is left. Safe to call more than once.
   */
  stop(graceMs?: number): Promise<void>;
  /** Open connections, refused connections and open streams, for metrics and tests. */
  stats(): { connections: number; refused: number; streams: number };
}

export interface ExtraService {
  readonly definition: ServiceDefinition;
  readonly implementation: UntypedServiceImplementation;
  /** Ends the service's long-lived streams when the listener stops, so its stop does not wait on them. */
  readonly endStreams?: () => void;
}

export interface CreateGrpcServerOptions extends GrpcServerOptions {
  log?: Logger;
  /** The server's tracer (`server.tracing`); without it calls still get trace ids, from a tracer that records nothing. */
  tracing?: Tracing;
  /** The server's metrics (`server.metrics`); without them nothing is counted. */
  metrics?: Metrics;
  /** What /ready reports; `grpc.health.v1.Health` answers SERVING exactly when it says ready. */
  readiness?: () => { ready: boolean };
  /** Every timer of the listener (deadlines, the first-request timeout, refusals, the stop grace, Health Watch); the real clock by default. */
  clock?: Clock;
  /** The security steps and endpoints; without them every caller is `anonymous` and the security endpoints answer UNAVAILABLE. */
  security?: Security;
  /** Serve gRPC over TLS with this certificate, followed across reloads. */
  tls?: TlsMaterial;
  /** Services beside the management API (the node-to-node ClusterService), which carry their own proof instead of passing the security steps. */
  services?: ReadonlyArray<ExtraService>;
}

/**
 * A call to a service beside the management API counts as its connection's
 * request too: without it `connection_timeout` would cut a connection that
 * carries only node-to-node calls, and the calls in flight on it.
 */
function seenBy(implementation: UntypedServiceImplementation, sawRequest: (call: { getPeer(): string }) => void): UntypedServiceImplementation {
  return Object.fromEntries(
    Object.entries(implementation).map(([name, handler]) => [
      name,
      (call: { getPeer(): string }, callback?: unknown) => {
        sawRequest(call);
        (handler as (call: unknown, callback?: unknown) => void)(call, callback);
      },
    ]),
  ) as UntypedServiceImplementation;
}

function managementServiceDefinition(): ServiceDefinition {
  const grpcObject = loadPackageDefinition(loadManagementProto().packageDefinition);
  let node: unknown = grpcObject;
  for (const part of MANAGEMENT_SERVICE_NAME.split('.')) node = (node as Record<string, unknown>)[part];
  return (node as { service: ServiceDefinition }).service;
}

export function createGrpcServer(service: AgentService, options: CreateGrpcServerOptions): GrpcServer {
  const { log } = options;
  const clock = options.clock ?? createRealClock();
  const telemetry = { tracing: options.tracing ?? untracedTracing(), metrics: options.metrics, log };
  const { security } = options;
  const server = new Server({
    ...channelOptionsFor(options),
    interceptors: [
      // First in the list: grpc-js hands the first interceptor its base call, whose own statuses telemetry maps (see its file).
      telemetryInterceptor(telemetry),
      ...(security === undefined
        ? []
        : [
            securedCallInterceptor(security), // the operation and what the call presents
            sourceBlockInterceptor(security.gate), // before authentication: a blocked source's credential is not even looked at
            authenticateInterceptor(security.gate),
            rateLimitInterceptor(security.gate), // after authentication: keyed by the principal, and a key's own limit
            lockdownInterceptor(security.gate),
            authorizeInterceptor(security.gate),
            auditInterceptor(security.gate), // last: the outcome of what passed the gate
          ]),
    ],
  });
  answerUnknownMethods(server, telemetry);
  const limiter = createConnectionLimiter({
    maxConnections: options.maxConnections,
    connectionTimeoutMs: options.connectionTimeoutMs,
    accept: (socket) => injector.injectConnection(socket),
    clock,
    refusal: () =>
      toGrpcStatus(
        new SvcError('UNAVAILABLE', `the server accepts at most ${options.maxConnections} connections`, {
          reason: 'connection_limit',
          limit: String(options.maxConnections),
        }),
        newTraceId(),
      ),
  });
  const handlers = createManagementHandlers(service, {
    requestTimeoutMs: options.requestTimeoutMs,
    onCall: (call) => limiter.sawRequest(call),
    log,
    clock,
    ...(security === undefined ? {} : { security: security.service }),
  });
  server.addService(withStrictDecoding(managementServiceDefinition(), loadManagementProto().service), handlers.implementation);
  const health = createHealthService({
    ...(options.readiness === undefined ? {} : { readiness: options.readiness }),
    clock,
  });
  server.addService(health.definition, health.implementation);
  for (const extra of options.services ?? []) server.addService(extra.definition, seenBy(extra.implementation, (call) => limiter.sawRequest(call)));
  managementReflectionService([health.reflection]).addToServer(server);
  const injector = server.createConnectionInjector(options.tls === undefined ? ServerCredentials.createInsecure() : grpcTlsCredentials(options.tls));

  let started: Promise<string> | undefined;
  let stopping: Promise<void> | undefined;

  async function listen(): Promise<string> {
    const { host, port } = splitAddress(options.address);
    const bound = await limiter.listen(host, port);
    const address = joinAddress(bound.address, bound.port);
    log?.debug({ grpc_addr: address }, 'grpc listener bound');
    return address;
  }

  async function shutdown(graceMs: number): Promise<void> {
    const closed = limiter.close();
    health.shutdown();
    handlers.endStreams(new SvcError('UNAVAILABLE', 'the server is shutting down', { reason: 'draining' }));
    for (const extra of options.services ?? []) extra.endStreams?.();
    await new Promise<void>((resolve) => {
      const force = clock.setTimeout(() => {
        server.forceShutdown();
        resolve();
      }, graceMs);
      server.tryShutdown(() => {
        clock.clearTimeout(force);
        resolve();
      });
    });
    injector.destroy();
    await closed;
  }

  return {
    start() {
      started ??= listen();
      return started;
    },
    stop(graceMs = STOP_GRACE_MS) {
      stopping ??= shutdown(graceMs);
      return stopping;
    },
    stats() {
      return { connections: limiter.open, refused: limiter.refused, streams: handlers.streams };
    },
  };
}
