/**
 * `grpc.health.v1.Health` (proto/grpc/health/v1/health.proto), the standard
 * health service load balancers, Kubernetes gRPC probes and
 * grpc_health_probe call. The server as a whole ("") and the management
 * service are SERVING exactly when the readiness the HTTP listener's /ready
 * reports says ready; a Check of any other name is NOT_FOUND (with the
 * `svc-error-bin` trailer every gRPC error carries), a Watch of it answers
 * SERVICE_UNKNOWN, as the protocol says.
 *
 * Readiness has no change events (it is a function of starting, draining
 * and the services' state), so open Watch streams read it again every
 * `HEALTH_WATCH_INTERVAL_MS` on the injected clock and send the status when
 * it changed; at shutdown they get NOT_SERVING, then end.
 */
import { loadPackageDefinition, type ServerUnaryCall, type ServerWritableStream, type ServiceDefinition, type UntypedServiceImplementation, type sendUnaryData } from '@grpc/grpc-js';
import { loadSync, type PackageDefinition } from '@grpc/proto-loader';
import protobuf from 'protobufjs';
import { createRealClock, type Clock, type TimerHandle } from '../../../supervisors/index.js';
import { SvcError } from '../../errors/svc-error.js';
import { callContext } from '../api-call.js';
import { LOADER_OPTIONS, MANAGEMENT_SERVICE_NAME, PROTO_DIR } from '../proto.js';
import { toGrpcStatus } from './grpc-errors.js';
import { fileDescriptorProtos, withFileDescriptorProtos } from './grpc-reflection-files.js';

/** The schema file, relative to the proto directory. */
export const HEALTH_PROTO_FILE = 'grpc/health/v1/health.proto';
export const HEALTH_SERVICE_NAME = 'grpc.health.v1.Health';
/** A probe polls every few seconds (Kubernetes: 10 s by default); a second keeps a watcher as current at the cost of a function call. */
export const HEALTH_WATCH_INTERVAL_MS = 1_000;

export type ServingStatus = 'SERVING' | 'NOT_SERVING' | 'SERVICE_UNKNOWN';

export interface HealthServiceOptions {
  /** The readiness /ready reports; without it the server is SERVING while its listener runs. */
  readiness?: () => { ready: boolean };
  clock?: Clock;
}

export interface HealthService {
  readonly definition: ServiceDefinition;
  readonly implementation: UntypedServiceImplementation;
  /** For reflection: the package definition carrying the file's protoc-shaped descriptor. */
  readonly reflection: PackageDefinition;
  /** Open Watch streams. */
  readonly watchers: number;
  /** NOT_SERVING from now on: open Watch streams get it, then end. */
  shutdown(): void;
}

/** The names answered for: the server as a whole, and each service it serves. */
const KNOWN_SERVICES: ReadonlySet<string> = new Set(['', MANAGEMENT_SERVICE_NAME]);

interface HealthCheckRequest {
  service: string;
}

interface HealthCheckResponse {
  status: ServingStatus;
}

let loaded: { definition: ServiceDefinition; reflection: PackageDefinition } | undefined;

function healthSchema(): { definition: ServiceDefinition; reflection: PackageDefinition } {
  if (loaded === undefined) {
    const packageDefinition = loadSync(HEALTH_PROTO_FILE, { ...LOADER_OPTIONS });
    let node: unknown = loadPackageDefinition(packageDefinition);
    for (const part of HEALTH_SERVICE_NAME.split('.')) node = (node as Record<string, unknown>)[part];
    const root = new protobuf.Root();
    root.resolvePath = (_origin, target) => `${PROTO_DIR}/${target}`;
    root.loadSync(HEALTH_PROTO_FILE, { keepCase: true });
    root.resolveAll();
    loaded = {
      definition: (node as { service: ServiceDefinition }).service,
      reflection: withFileDescriptorProtos(packageDefinition, fileDescriptorProtos(root, PROTO_DIR)),
    };
  }
  return loaded;
}

export function createHealthService(options: HealthServiceOptions = {}): HealthService {
  const readiness = options.readiness ?? (() => ({ ready: true }));
  const clock = options.clock ?? createRealClock();
  const watchers = new Set<{ changed(): void; end(): void }>();
  let shutDown = false;
  let timer: TimerHandle | undefined;

  const statusOf = (service: string): ServingStatus => {
    if (!KNOWN_SERVICES.has(service)) return 'SERVICE_UNKNOWN';
    return !shutDown && readiness().ready ? 'SERVING' : 'NOT_SERVING';
  };

  /** One timer for every watcher, armed only while there are some. */
  const tick = (): void => {
    timer = undefined;
    for (const watcher of watchers) watcher.changed();
    if (watchers.size > 0) timer = clock.setTimeout(tick, HEALTH_WATCH_INTERVAL_MS);
  };

  function check(call: ServerUnaryCall<HealthCheckRequest, HealthCheckResponse>, callback: sendUnaryData<HealthCheckResponse>): void {
    const { service } = call.request;
    if (!KNOWN_SERVICES.has(service)) {
      callback(toGrpcStatus(new SvcError('NOT_FOUND', `no health status for the service '${service}'`, { service }), callContext().trace_id));
      return;
    }
    callback(null, { status: statusOf(service) });
  }

  function watch(call: ServerWritableStream<HealthCheckRequest, HealthCheckResponse>): void {
    const { service } = call.request;
    let sent: ServingStatus | undefined;
    const watcher = {
      changed() {
        const status = statusOf(service);
        if (status === sent) return;
        sent = status;
        call.write({ status });
      },
      end() {
        watchers.delete(watcher);
        call.end();
      },
    };
    watcher.changed();
    if (shutDown) {
      call.end();
      return;
    }
    watchers.add(watcher);
    call.on('cancelled', () => watchers.delete(watcher));
    timer ??= clock.setTimeout(tick, HEALTH_WATCH_INTERVAL_MS);
  }

  const { definition, reflection } = healthSchema();
  return {
    definition,
    implementation: { Check: check, Watch: watch },
    reflection,
    get watchers() {
      return watchers.size;
    },
    shutdown() {
      shutDown = true;
      if (timer !== undefined) clock.clearTimeout(timer);
      timer = undefined;
      for (const watcher of [...watchers]) {
        watcher.changed();
        watcher.end();
      }
    },
  };
}
