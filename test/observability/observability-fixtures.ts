/**
 * The whole server as `svc start` runs it (startServer + startListeners, on
 * 127.0.0.1 ephemeral ports), tracing every call to an OTLP/HTTP receiver
 * the test started, with the logger's stream captured. What the end-to-end
 * observability tests stand on; each test stops what it starts.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureExamplesBuilt } from '../../scripts/build-examples.js';
import { createGrpcClient, type GrpcClient } from '../../src/api/grpc/grpc-client.js';
import { loadConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import type { Clock } from '../../supervisors/index.js';
import type { BusEvent } from '../../src/bus/events.js';
import { startListeners, type Listeners } from '../../src/listeners.js';
import { startServer, type Server } from '../../src/server.js';
import { createLogger, loggerOptionsFrom } from '../../src/telemetry/logger.js';
import { startHttpReceiver, type ReceivedSpan, type Receiver } from '../telemetry/otlp-receiver.js';
import { captureLog, type LogCapture } from '../telemetry/telemetry-fixtures.js';
import { whenArrived } from '../telemetry/when-arrived.js';

const built = await ensureExamplesBuilt();

/** The bytes of a built example agent (examples/build/<name>.wasm). */
export function example(name: 'echo' | 'ping' | 'pong' | 'crasher' | 'tracer'): Buffer {
  const path = built.get(name);
  if (path === undefined) throw new Error(`example ${name} was not built`);
  return readFileSync(path);
}

export interface ObservedServer {
  readonly config: Config;
  readonly server: Server;
  readonly listeners: Listeners;
  readonly receiver: Receiver;
  readonly log: LogCapture;
  readonly client: GrpcClient;
  /** `http://127.0.0.1:port` of the REST listener. */
  readonly api: string;
  /** `http://127.0.0.1:port/metrics` of the metrics listener. */
  readonly metricsUrl: string;
  /**
   * Exports what has ended, then waits (bounded) until `done` holds for the spans received, checked as
   * each export arrives; spans that end later arrive with the batch processor's next export.
   */
  spansUntil(done: (spans: readonly ReceivedSpan[]) => boolean, what: string, timeoutMs?: number): Promise<ReceivedSpan[]>;
  /** Starts recording the bus's events; `waitFor` resolves with the first recorded one `match` accepts. */
  busEvents(): BusRecording;
  stop(): Promise<void>;
}

export interface BusRecording {
  waitFor<E extends BusEvent>(match: (event: BusEvent) => event is E, what: string, timeoutMs?: number): Promise<E>;
  stop(): void;
}

/** `flags` are further configuration flags (`--runtime.restart_backoff_initial=10ms`); `clock` drives the server's timers. */
export async function startObservedServer(flags: readonly string[] = [], options: { clock?: Clock } = {}): Promise<ObservedServer> {
  const receiver = await startHttpReceiver();
  const dir = mkdtempSync(join(tmpdir(), 'svc-observability-'));
  const config = loadConfig({
    argv: [
      `--storage.data_dir=${dir}`,
      '--server.http_addr=127.0.0.1:0',
      '--server.grpc_addr=127.0.0.1:0',
      '--server.metrics_addr=127.0.0.1:0',
      '--runtime.executor_workers=1',
      '--observability.enable_tracing=true',
      '--observability.trace_sample_rate=1',
      '--observability.message_trace_sample_rate=1',
      `--observability.otlp_endpoint=${receiver.url}`,
      '--observability.log_level=debug',
      ...flags,
    ],
    env: {},
    cwd: dir,
  });
  const log = captureLog();
  const logger = createLogger(loggerOptionsFrom(config.observability, log.stream));
  let server: Server | undefined;
  let listeners: Listeners | undefined;
  const stopAll = async (): Promise<void> => {
    await listeners?.stop();
    await server?.stop();
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    server = await startServer(config, logger, { cwd: dir, clock: options.clock });
    listeners = await startListeners(server, config, logger);
  } catch (error) {
    await stopAll();
    throw error;
  }
  const client = createGrpcClient(listeners.addresses.grpc);
  const tracing = server.tracing;
  const started = server;
  return {
    config,
    server,
    listeners,
    receiver,
    log,
    client,
    api: `http://${listeners.addresses.http}`,
    metricsUrl: `http://${listeners.addresses.metrics}/metrics`,
    async spansUntil(done, what, timeoutMs = 10_000) {
      await tracing.flush();
      return receiver.waitUntil(done, what, timeoutMs);
    },
    busEvents() {
      const host = started.host();
      if (host === undefined) throw new Error('the server has no agent host');
      const events: BusEvent[] = [];
      const arrivals = new Set<() => void>();
      const subscription = host.bus.subscribe().subscribe((event) => {
        events.push(event);
        for (const arrival of [...arrivals]) arrival();
      });
      return {
        waitFor: <E extends BusEvent>(match: (event: BusEvent) => event is E, what: string, timeoutMs = 10_000) =>
          whenArrived(arrivals, () => events.find(match), what, timeoutMs),
        stop: () => subscription.unsubscribe(),
      };
    },
    async stop() {
      client.close();
      await stopAll();
    },
  };
}

/** POST/GET JSON on the REST listener; answers status, headers and the parsed body. */
export async function rest(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(base + path, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- assertions read arbitrary JSON shapes
  return { status: res.status, headers: res.headers, body: (text === '' ? undefined : JSON.parse(text)) as any, text };
}

/** Spans of one trace, by name. */
export function named(spans: readonly ReceivedSpan[], name: string, traceId?: string): ReceivedSpan[] {
  return spans.filter((s) => s.name === name && (traceId === undefined || s.traceId === traceId));
}
