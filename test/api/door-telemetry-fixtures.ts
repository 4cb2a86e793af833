/**
 * Both doors of one real server with their telemetry observable: spans kept
 * in memory, the log captured at debug (access lines included), the server's
 * own metrics, and an `AgentService` wrapper that notes which span was
 * active when each call reached the service (the span the agent side's
 * spans become children of).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { trace } from '@opentelemetry/api';
import type { AgentService } from '../../src/agents/agent-service-types.js';
import { createGrpcClient, type GrpcClient } from '../../src/api/grpc/grpc-client.js';
import { grpcServerOptionsFrom } from '../../src/api/grpc/grpc-server-options.js';
import { createGrpcServer, type GrpcServer } from '../../src/api/grpc/grpc-server.js';
import { createHttpServer, httpServerOptionsFrom, type HttpServer } from '../../src/api/http/http-server.js';
import { loadConfig } from '../../src/config/load.js';
import { startServer, type Server } from '../../src/server.js';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { capturedLogger, memoryTracing, type LogCapture } from '../telemetry/telemetry-fixtures.js';

export interface ServiceEntry {
  method: string;
  /** Trace and span id active when the call reached the service. */
  traceId: string | undefined;
  spanId: string | undefined;
}

export interface TelemetryDoors {
  readonly server: Server;
  readonly grpc: GrpcServer;
  readonly http: HttpServer;
  readonly client: GrpcClient;
  readonly grpcAddress: string;
  readonly httpBase: string;
  readonly httpAddress: string;
  readonly log: LogCapture;
  /** Every call the doors made on the service, in order. */
  readonly entries: ServiceEntry[];
  /** Finished spans so far (flushed). */
  spans(): Promise<ReadableSpan[]>;
  /** Resolves once `done` holds for the finished spans, checked as they are exported. */
  spansUntil(done: (spans: readonly ReadableSpan[]) => boolean, what: string, timeoutMs?: number): Promise<ReadableSpan[]>;
  /** Forgets the spans finished so far. */
  resetSpans(): void;
  stop(): Promise<void>;
}

/** Wraps every method of `service` to note the active span when a door calls it. */
function spied(service: AgentService, entries: ServiceEntry[]): AgentService {
  const wrapped = {} as Record<string, unknown>;
  for (const [name, method] of Object.entries(service) as Array<[string, (...args: unknown[]) => unknown]>) {
    wrapped[name] = (...args: unknown[]) => {
      const span = trace.getActiveSpan()?.spanContext();
      entries.push({ method: name, traceId: span?.traceId, spanId: span?.spanId });
      return method.apply(service, args);
    };
  }
  return wrapped as unknown as AgentService;
}

export async function startTelemetryDoors(): Promise<TelemetryDoors> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-door-telemetry-'));
  const config = loadConfig({
    argv: [`--storage.data_dir=${dir}`, '--server.http_addr=127.0.0.1:0', '--server.grpc_addr=127.0.0.1:0', '--runtime.executor_workers=1'],
    env: {},
    cwd: dir,
  });
  const memory = memoryTracing();
  const { log, capture } = capturedLogger({ level: 'debug' });
  const server = await startServer(config, log, { cwd: dir, tracing: memory.tracing });
  const entries: ServiceEntry[] = [];
  const service = spied(server.service, entries);
  const telemetry = { log, tracing: server.tracing, metrics: server.metrics };
  const grpc = createGrpcServer(service, { ...grpcServerOptionsFrom(config), ...telemetry });
  const http = createHttpServer(service, httpServerOptionsFrom(config, telemetry));
  const grpcAddress = await grpc.start();
  const httpAddress = await http.start();
  const client = createGrpcClient(grpcAddress);
  return {
    server,
    grpc,
    http,
    client,
    grpcAddress,
    httpAddress,
    httpBase: `http://${httpAddress}`,
    log: capture,
    entries,
    spans: () => memory.spans(),
    spansUntil: (done, what, timeoutMs) => memory.spansUntil(done, what, timeoutMs),
    resetSpans: () => memory.exporter.reset(),
    async stop() {
      client.close();
      await grpc.stop(1_000);
      await http.stop();
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The one span named `name` in `trace`; fails when there is none or more than one. */
export function only(spans: readonly ReadableSpan[], name: string, traceId?: string): ReadableSpan {
  const found = spans.filter((s) => s.name === name && (traceId === undefined || s.spanContext().traceId === traceId));
  if (found.length !== 1) throw new Error(`expected one ${name} span${traceId ? ` in trace ${traceId}` : ''}, found ${found.length}: ${spans.map((s) => s.name).join(', ')}`);
  return found[0]!;
}

/** Waits until a span named `name` (in `traceId`, if given) has finished. */
export async function spanOf(doors: TelemetryDoors, name: string, traceId?: string, timeoutMs = 5_000): Promise<ReadableSpan> {
  const named = (s: ReadableSpan) => s.name === name && (traceId === undefined || s.spanContext().traceId === traceId);
  const spans = await doors.spansUntil((all) => all.some(named), `a ${name} span${traceId ? ` in trace ${traceId}` : ''}`, timeoutMs);
  return only(spans, name, traceId);
}
