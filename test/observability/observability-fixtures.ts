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
import { startListeners, type Listeners } from '../../src/listeners.js';
import { startServer, type Server } from '../../src/server.js';
import { createLogger, loggerOptionsFrom } from '../../src/telemetry/logger.js';
import { startHttpReceiver, type ReceivedSpan, type Receiver } from '../telemetry/otlp-receiver.js';
import { captureLog, type LogCapture } from '../telemetry/telemetry-fixtures.js';

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
  /** Exports what has ended, then waits (bounded) until `done` holds for the spans received so far. */
  spansUntil(done: (spans: readonly ReceivedSpan[]) => boolean, what: string, timeoutMs?: number): Promise<ReceivedSpan[]>;
  stop(): Promise<void>;
}

/** `flags` are further configuration flags (`--runtime.restart_backoff_initial=10ms`). */
export async function startObservedServer(flags: readonly string[] = []): Promise<ObservedServer> {
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
    server = await startServer(config, logger, { cwd: dir });
    listeners = await startListeners(server, config, logger);
  } catch (error) {
    await stopAll();
    throw error;
  }
  const client = createGrpcClient(listeners.addresses.grpc);
  const tracing = server.tracing;
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
      const until = Date.now() + timeoutMs;
      for (;;) {
        await tracing.flush();
        if (done(receiver.spans)) return [...receiver.spans];
        if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; received ${receiver.spans.map((s) => s.name).join(', ')}`);
        await new Promise((r) => setTimeout(r, 50));
      }
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

/** Polls `check` until it gives a value; fails after `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T | undefined> | T | undefined, what: string, timeoutMs = 10_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Spans of one trace, by name. */
export function named(spans: readonly ReceivedSpan[], name: string, traceId?: string): ReceivedSpan[] {
  return spans.filter((s) => s.name === name && (traceId === undefined || s.traceId === traceId));
}
