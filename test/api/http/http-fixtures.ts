/**
 * A real server for the gateway tests: the store, executor pool, bus and
 * agents of `startServer` in a temporary data directory, and the HTTP
 * listener on an ephemeral loopback port in front of its AgentService.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHttpServer, httpServerOptionsFrom, type HttpServer, type HttpServerOptions } from '../../../src/api/http/http-server.js';
import { loadConfig } from '../../../src/config/load.js';
import type { Config } from '../../../src/config/schema.js';
import { startServer, type Server } from '../../../src/server.js';
import { createLogger } from '../../../src/telemetry/logger.js';

export const ECHO_WASM: Buffer = readFileSync(fileURLToPath(new URL('../../../examples/build/echo.wasm', import.meta.url)));

export interface Gateway {
  readonly base: string;
  readonly address: string;
  readonly config: Config;
  readonly server: Server;
  readonly http: HttpServer;
  stop(): Promise<void>;
}

/** `flags` are configuration flags (`--server.keepalive_timeout=200ms`). */
export async function startGateway(flags: readonly string[] = [], extra: Partial<HttpServerOptions> = {}): Promise<Gateway> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-http-test-'));
  const config = loadConfig({ argv: [`--storage.data_dir=${dir}`, '--server.http_addr=127.0.0.1:0', '--runtime.executor_workers=1', ...flags], env: {} });
  const log = createLogger({ level: 'fatal', enabled: false });
  const server = await startServer(config, log, { cwd: dir });
  const http = createHttpServer(server.service, { ...httpServerOptionsFrom(config, { log, tracing: server.tracing, metrics: server.metrics }), ...extra });
  const address = await http.start();
  return {
    base: `http://${address}`,
    address,
    config,
    server,
    http,
    async stop() {
      await http.stop();
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface Answer {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- assertions read arbitrary JSON shapes
  body: any;
  text: string;
}

/** One request; a non-string body is sent as JSON with `Content-Type: application/json`. */
export async function call(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const json = body !== undefined && typeof body !== 'string';
  const res = await fetch(base + path, {
    method,
    headers: { ...(json ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(body === undefined ? {} : { body: json ? JSON.stringify(body) : (body as string) }),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: the text stays
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}

/** Deploys the echo example and answers its id. */
export async function deployEcho(base: string, name: string): Promise<string> {
  const answer = await call(base, 'POST', '/api/v1/agents', { name, wasm_module: ECHO_WASM.toString('base64') });
  if (answer.status !== 201) throw new Error(`deploy failed: ${answer.text}`);
  return answer.body.agent_id as string;
}

/** Polls until `check` holds or `timeoutMs` passes. */
export async function eventually<T>(check: () => Promise<T | undefined> | T | undefined, timeoutMs = 5_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
