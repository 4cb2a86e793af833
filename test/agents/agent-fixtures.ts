/**
 * Shared by the agent and integration tests: a real server (real executor
 * workers, real WASM, real SQLite in a temp dir) built from test-sized
 * settings, the example agents, and bounded waits. Every test stops the
 * server it starts (`using`-style: `await t.stop()` in a finally).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { ensureExamplesBuilt } from '../../scripts/build-examples.js';
import type { Clock, Random } from '../../supervisors/index.js';
import { createFixedRandom } from '../../supervisors/index.js';
import type { AgentHost } from '../../src/agents/agent-host.js';
import type { Agent, AgentService, CallContext } from '../../src/agents/agent-service-types.js';
import type { BusEvent, LifecycleEvent, MessageEvent } from '../../src/bus/events.js';
import type { BusFilter } from '../../src/bus/filter.js';
import { loadConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { startServer, type Server } from '../../src/server.js';
import { createLogger, type Logger } from '../../src/telemetry/logger.js';
import type { Tracing } from '../../src/telemetry/tracing.js';

export const ctx: CallContext = { principal: 'tester', trace_id: 'trace-test' };
export const CLIENT = 'client:tester';

const built = await ensureExamplesBuilt();

/** The bytes of a built example agent (examples/build/<name>.wasm). */
export function example(name: 'echo' | 'counter' | 'ping' | 'pong' | 'crasher'): Uint8Array {
  const path = built.get(name);
  if (path === undefined) throw new Error(`example ${name} was not built`);
  return new Uint8Array(readFileSync(path));
}

/** Settings small enough for tests; `overrides` are `section.key` → value as on the command line. */
export function testConfig(dataDir: string, overrides: Record<string, string | number> = {}): Config {
  const settings: Record<string, string | number> = {
    'storage.data_dir': dataDir,
    'runtime.executor_workers': 2,
    'runtime.wasm_memory_limit': '512MiB',
    'runtime.fuel_per_execution': 2_000_000_000,
    'runtime.execution_timeout': '10s',
    'runtime.agent_startup_timeout': '10s',
    'runtime.restart_backoff_jitter': 0,
    ...overrides,
  };
  // `cwd` is the temp dir, so no svc.toml of the repository is read, and `env` is empty.
  return loadConfig({ argv: Object.entries(settings).map(([key, value]) => `--${key}=${value}`), env: {}, cwd: dataDir });
}

export interface LogRecord {
  msg: string;
  level: number;
  [field: string]: unknown;
}

export interface TestServer {
  readonly server: Server;
  readonly service: AgentService;
  readonly dir: string;
  /** Every log record written so far. */
  readonly logs: LogRecord[];
  host(): AgentHost;
  /** Every bus event (matching `filter`) from now on, synchronously, in order. */
  events(filter?: BusFilter): BusEvent[];
  /** Stops the server; keeps the data dir when `keepData`. */
  stop(keepData?: boolean): Promise<void>;
}

export interface TestServerOptions {
  overrides?: Record<string, string | number>;
  clock?: Clock;
  random?: Random;
  /** Reuse a data dir (a restart); a new temp dir otherwise. */
  dir?: string;
  /** Default: the configuration's, which records nothing. */
  tracing?: Tracing;
}

/** The server's own logger (trace ids, redaction), writing into `records`. */
export function captureLogger(records: LogRecord[]): Logger {
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line !== '') records.push(JSON.parse(line) as LogRecord);
      done();
    },
  });
  return createLogger({ level: 'info', stream });
}

export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'svc-agents-'));
  const logs: LogRecord[] = [];
  // The CPU quota refills with the clock: with a simulated one that stands still, it would never refill.
  const overrides = options.clock === undefined ? options.overrides : { 'runtime.cpu_quota_per_agent': 0, ...options.overrides };
  const server = await startServer(testConfig(dir, overrides), captureLogger(logs), {
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.tracing === undefined ? {} : { tracing: options.tracing }),
    random: options.random ?? createFixedRandom(0.5),
  });
  const host = (): AgentHost => {
    const current = server.host();
    assert.ok(current, 'the agent host is running');
    return current;
  };
  return {
    server,
    service: server.service,
    dir,
    logs,
    host,
    events(filter = {}) {
      const seen: BusEvent[] = [];
      host().bus.subscribe(filter).subscribe((event) => seen.push(event));
      return seen;
    },
    async stop(keepData = false) {
      await server.stop();
      if (!keepData && options.dir === undefined) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Polls `predicate` (real time) until it holds; fails after `timeoutMs`. */
export async function waitFor<T>(predicate: () => T | undefined | false, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = predicate();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

export function messages(events: readonly BusEvent[], direction?: MessageEvent['direction']): MessageEvent['message'][] {
  return events.filter((e): e is MessageEvent => e.kind === 'message' && (direction === undefined || e.direction === direction)).map((e) => e.message);
}

export function transitions(events: readonly BusEvent[], agentId?: string): LifecycleEvent[] {
  return events.filter((e): e is LifecycleEvent => e.kind === 'lifecycle' && (agentId === undefined || e.agent_id === agentId));
}

/** The messages delivered to `receiver` (a client, or an agent) so far. */
export function deliveredTo(events: readonly BusEvent[], receiver: string): MessageEvent['message'][] {
  return messages(events, 'delivered').filter((m) => m.receiver === receiver);
}

/** Waits until the agent's machine is in `state`. */
export async function waitForState(t: TestServer, agentId: string, state: Agent['state'], timeoutMs = 10_000): Promise<Agent> {
  return waitFor(
    () => {
      const runtime = t.server.host()?.get(agentId);
      return runtime !== undefined && runtime.visibleState === state ? true : undefined;
    },
    `agent ${agentId} to be ${state}`,
    timeoutMs,
  ).then(() => t.service.get(agentId, ctx));
}

export async function deploy(t: TestServer, module: Uint8Array, name: string, resources = { memory_limit: 0, cpu_shares: 0 }): Promise<string> {
  const { agent_id } = await t.service.deploy({ name, wasm_module: module, capabilities: [], resources }, ctx);
  return agent_id;
}

/** Sends `content` from the test client and waits for the reply delivered to it. */
export async function ask(t: TestServer, events: readonly BusEvent[], receiver: string, content: string, timeoutMs = 10_000): Promise<MessageEvent['message']> {
  const { message_id } = await t.service.send({ receiver, message_type: 'request', content }, ctx);
  return waitFor(() => deliveredTo(events, CLIENT).find((m) => m.in_reply_to === message_id) ?? messages(events, 'platform').find((m) => m.in_reply_to === message_id), `a reply to ${content}`, timeoutMs);
}
