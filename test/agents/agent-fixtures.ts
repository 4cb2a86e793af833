/**
 * Shared by the agent and integration tests: a real server (real executor
 * workers, real WASM, real SQLite in a temp dir) built from test-sized
 * settings, the example agents, and waits for what a test expects.
 *
 * The agent tests give the server a simulated clock: every timeout, backoff,
 * idle timer and the executor watchdog move only when the test moves it.
 * They wait with `until`, which is not a poll: it checks its condition again
 * on every bus event and log record of any test server. Every test stops the
 * server it starts (`await t.stop()` in a finally).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { ensureExamplesBuilt } from '../../scripts/build-examples.js';
import { createFixedRandom, type Clock, type Random, type SimulatedClock } from '../../supervisors/index.js';
import type { AgentHost } from '../../src/agents/agent-host.js';
import type { Agent, AgentService, CallContext } from '../../src/agents/agent-service-types.js';
import type { BusEvent, LifecycleEvent, MessageEvent } from '../../src/bus/events.js';
import type { BusFilter } from '../../src/bus/filter.js';
import type { IdGenerator } from '../../src/bus/message-id.js';
import { loadConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { WATCHDOG_PERIOD_MS } from '../../src/sandbox/watchdog.js';
import { startServer, type Server } from '../../src/server.js';
import { createLogger, type Logger } from '../../src/telemetry/logger.js';
import type { Tracing } from '../../src/telemetry/tracing.js';

export const ctx: CallContext = { principal: 'tester', trace_id: 'trace-test' };
export const CLIENT = 'client:tester';

/** A bound on each suite that starts servers, so a wait that never ends fails the suite instead of hanging the run. */
export const TEST_TIMEOUT_MS = 300_000;

interface Wait {
  check(): boolean;
  fail(error: Error): void;
}

/** The conditions tests wait for, checked again after every bus event and log record. */
const waits = new Set<Wait>();
let checking = false;

/** Checks the waits once the event has reached every subscriber (a test's own list of events among them). */
function wake(): void {
  if (checking || waits.size === 0) return;
  checking = true;
  queueMicrotask(() => {
    checking = false;
    for (const wait of [...waits]) if (wait.check()) waits.delete(wait);
  });
}

const built = await ensureExamplesBuilt();

/** The bytes of a built example agent (examples/build/<name>.wasm). */
export function example(name: 'echo' | 'counter' | 'ping' | 'pong' | 'crasher' | 'relay'): Uint8Array {
  const path = built.get(name);
  if (path === undefined) throw new Error(`example ${name} was not built`);
  return new Uint8Array(readFileSync(path));
}

/** Settings small enough for tests; `overrides` are `section.key` → value as on the command line. */
export function testConfig(dataDir: string, overrides: Record<string, string | number> = {}): Config {
  const settings: Record<string, string | number> = {
    'storage.data_dir': dataDir,
    'runtime.executor_workers': 2,
    'runtime.wasm_memory_total': '512MiB',
    'runtime.fuel_per_execution': 2_000_000_000,
    'runtime.execution_timeout': '10s',
    'runtime.agent_startup_timeout': '10s',
    'runtime.restart_backoff_jitter': 0,
    // The busy agents of these tests run long executions on purpose, which the shared lane's slice would cut;
    // the runaway tests turn it on.
    'runtime.execution_slice': 0,
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
  /** Default: the process clock. */
  clock?: Clock;
  random?: Random;
  /** Reuse a data dir (a restart); a new temp dir otherwise. */
  dir?: string;
  /** Default: the configuration's, which records nothing. */
  tracing?: Tracing;
  /** Default: the server's own generator. */
  newId?: IdGenerator;
}

/** The server's own logger (trace ids, redaction), writing into `records`. */
export function captureLogger(records: LogRecord[]): Logger {
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line !== '') records.push(JSON.parse(line) as LogRecord);
      done();
      wake();
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
    ...(options.newId === undefined ? {} : { newId: options.newId }),
    random: options.random ?? createFixedRandom(0.5),
  });
  const host = (): AgentHost => {
    const current = server.host();
    assert.ok(current, 'the agent host is running');
    return current;
  };
  host().bus.subscribe().subscribe(() => wake());
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
      for (const wait of waits) wait.fail(new Error('still waiting when a test server stopped'));
      waits.clear();
      if (!keepData && options.dir === undefined) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Polls `predicate` (real time) until it holds; fails after `timeoutMs`. For
 * conditions no bus event or log record announces (what a client's socket
 * received); the agent tests use `until`.
 */
export async function waitFor<T>(predicate: () => T | undefined | false, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  // Quick at first, then backing off: a long wait must not spin the CPU the server under test needs.
  for (let pause = 1; ; pause = Math.min(pause * 2, 50)) {
    const value = predicate();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
}

/**
 * Resolves with `predicate`'s value once it holds: now, or at the bus event
 * or log record that makes it hold. Waits still pending when a test server
 * stops fail, naming `what`.
 */
export function until<T>(predicate: () => T | undefined | false, what: string): Promise<T> {
  const now = predicate();
  if (now !== undefined && now !== false) return Promise.resolve(now);
  return new Promise<T>((resolve, reject) => {
    waits.add({
      check() {
        const value = predicate();
        if (value === undefined || value === false) return false;
        resolve(value);
        return true;
      },
      fail: (error) => reject(new Error(`${what}: ${error.message}`)),
    });
  });
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

/** Waits until the agent is in `state` as clients see it. */
export async function waitForState(t: TestServer, agentId: string, state: Agent['state']): Promise<Agent> {
  await until(() => t.server.host()?.get(agentId)?.visibleState === state, `agent ${agentId} to be ${state}`);
  return t.service.get(agentId, ctx);
}

export async function deploy(t: TestServer, module: Uint8Array, name: string, resources = { memory_limit: 0, cpu_shares: 0 }): Promise<string> {
  const { agent_id } = await t.service.deploy({ name, wasm_module: module, capabilities: [], resources }, ctx);
  return agent_id;
}

/** Sends `content` from the test client and waits for the reply delivered to it, or the platform's failure. */
export async function ask(t: TestServer, events: readonly BusEvent[], receiver: string, content: string): Promise<MessageEvent['message']> {
  const { message_id } = await t.service.send({ receiver, message_type: 'request', content }, ctx);
  return until(() => deliveredTo(events, CLIENT).find((m) => m.in_reply_to === message_id) ?? messages(events, 'platform').find((m) => m.in_reply_to === message_id), `a reply to ${content}`);
}

/**
 * Moves `clock` forward one watchdog period at a time until `predicate`
 * holds: for what only the executor watchdog ends (a run that spins past its
 * fuel), which times runs on that clock from when it first sees them.
 * Bounded by `maxMs` of clock time.
 */
export async function driveUntil<T>(clock: SimulatedClock, predicate: () => T | undefined | false, what: string, maxMs = 600_000): Promise<T> {
  const from = clock.now();
  for (;;) {
    const value = predicate();
    if (value !== undefined && value !== false) return value;
    if (clock.now() - from > maxMs) throw new Error(`${what}: not after ${maxMs} ms of clock time`);
    await clock.advance(WATCHDOG_PERIOD_MS);
  }
}
