/**
 * `svc start` as a real process on a given data directory, with ephemeral
 * loopback ports, for the tests whose behaviour is about processes: a full
 * disk, a read-only or damaged store, a second server, SIGKILL. It reads the
 * server's JSON log lines from stdout and the REST door it announced.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createRealClock } from '../../supervisors/index.js';
import { createIdGenerator } from '../../src/bus/message-id.js';
import { openStore } from '../../src/store/open-store.js';
import { example } from '../agents/agent-fixtures.js';
import { SVC_COMMAND } from '../helpers/svc-command.js';

/**
 * A process still running by then is killed, so a hang fails the test. Wide: each `svc` process
 * spends seconds of CPU loading its modules, and on a busy 2-core machine a start took over 20 s.
 */
const KILL_AFTER_MS = 120_000;

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface Running {
  readonly child: ChildProcess;
  readonly done: Promise<Run>;
}

/** `svc ARGS` as a real process in `cwd`, with only the environment given (no svc.toml, no SVC_* of the caller). */
export function runSvc(args: readonly string[], cwd: string, env: Record<string, string> = {}, killAfterMs = KILL_AFTER_MS): Running {
  const child = spawn(process.execPath, [...SVC_COMMAND, ...args], { cwd, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  const timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const done = new Promise<Run>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
  return { child, done };
}

const PORTS = { SVC_HTTP_ADDR: '127.0.0.1:0', SVC_GRPC_ADDR: '127.0.0.1:0', SVC_METRICS_ADDR: '127.0.0.1:0' };
/** Bounded waits on the server: a condition not met by then fails the test. */
const WAIT_MS = 30_000;
const POLL_MS = 20;

export interface LogLine {
  msg: string;
  level: number;
  [field: string]: unknown;
}

export interface SvcProcess {
  readonly running: Running;
  readonly pid: number;
  /** Every JSON log line written so far. */
  logs(): LogLine[];
  /** The REST base URL, once the server logged `listening`; rejects if it exited first. */
  readonly api: Promise<string>;
  /** SIGTERM, then the exit. */
  stop(): Promise<Run>;
  /** SIGKILL, then the exit. */
  kill(): Promise<Run>;
}

export function startSvc(dataDir: string, args: readonly string[] = [], env: Record<string, string> = {}, killAfterMs = KILL_AFTER_MS): SvcProcess {
  const running = runSvc(['start', ...args], dataDir, { ...PORTS, SVC_DATA_DIR: dataDir, SVC_RUNTIME_EXECUTOR_WORKERS: '1', ...env }, killAfterMs);
  const lines: LogLine[] = [];
  let partial = '';
  let announce: (url: string) => void = () => undefined;
  const api = new Promise<string>((resolve, reject) => {
    announce = resolve;
    void running.done.then((run) => reject(new Error(`svc exited (${run.code}) before listening: ${run.stderr}`)));
  });
  // Handled here: a test that expects the start to fail never reads it.
  api.catch(() => undefined);
  running.child.stdout?.on('data', (chunk: Buffer) => {
    const text = partial + chunk.toString();
    const complete = text.split('\n');
    partial = complete.pop() ?? '';
    for (const line of complete) {
      if (!line.startsWith('{')) continue;
      const record = JSON.parse(line) as LogLine;
      lines.push(record);
      if (record.msg === 'listening') announce(`http://${String(record.http)}`);
    }
  });
  const pid = running.child.pid;
  assert.ok(pid !== undefined, 'svc started');
  return {
    running,
    pid,
    logs: () => lines,
    api,
    stop() {
      running.child.kill('SIGTERM');
      return running.done;
    },
    kill() {
      running.child.kill('SIGKILL');
      return running.done;
    },
  };
}

export interface Answer {
  status: number;
  body: { code?: string; message?: string; metadata?: Record<string, string>; [key: string]: unknown };
}

export async function request(url: string, init: RequestInit = {}): Promise<Answer> {
  const res = await fetch(url, init);
  const text = await res.text();
  return { status: res.status, body: text === '' ? {} : (JSON.parse(text) as Answer['body']) };
}

/** POST /api/v1/agents with an example agent. */
export function deployExample(api: string, name: string, agent: 'echo' | 'counter' = 'echo'): Promise<Answer> {
  return request(`${api}/api/v1/agents`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name, wasm_module: Buffer.from(example(agent)).toString('base64') }),
  });
}

/** Asks until `check` holds for an answer, within `WAIT_MS`; returns that answer. */
export async function until(what: string, ask: () => Promise<Answer>, check: (answer: Answer) => boolean): Promise<Answer> {
  const deadline = Date.now() + WAIT_MS;
  let last: Answer | undefined;
  while (Date.now() < deadline) {
    last = await ask();
    if (check(last)) return last;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  throw new Error(`timed out waiting for ${what}; last answer ${JSON.stringify(last)}`);
}

/** Waits until the server has logged a line matching `match`. */
export async function logged(svc: SvcProcess, what: string, match: (line: LogLine) => boolean): Promise<LogLine> {
  const deadline = Date.now() + WAIT_MS;
  while (Date.now() < deadline) {
    const line = svc.logs().find(match);
    if (line !== undefined) return line;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  throw new Error(`timed out waiting for the log line ${what}`);
}

/**
 * A data directory holding `names` as deployed echo agents, written through
 * the store as a server writes it (faster than a server process, for tests
 * about what a later start finds).
 */
export function seedAgents(dataDir: string, names: readonly string[]): void {
  const store = openStore({ dataDir, recover: false, clock: createRealClock(), log: { info: () => undefined, warn: () => undefined, error: () => undefined } });
  try {
    for (const name of names) {
      store.putAgentWithModule(
        { agentId: createIdGenerator()(), name, capabilities: [], resources: { memoryLimit: 1024 * 65_536, cpuShares: 1024 }, desiredState: 'running', nodeId: store.nodeId, createdAt: Date.now() },
        example('echo'),
      );
    }
  } finally {
    store.close();
  }
}
