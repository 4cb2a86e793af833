/**
 * A real svc server for the dashboard's browser tests and screenshots: `svc
 * start` as its own process (see svc-command.ts), every
 * listener on an ephemeral loopback port, its data in a temporary directory,
 * and only the environment given, so no svc.toml or SVC_* variable of the
 * caller leaks in. The HTTP address is read from the `listening` log line.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SVC_COMMAND } from '../helpers/svc-command.js';

/** A loaded machine with tsx compiling the server: well above the usual 2-4 s. */
const START_TIMEOUT_MS = 90_000;
/** SIGTERM drains agents (each within agent_shutdown_timeout, 5 s); past this the process is killed. */
const STOP_TIMEOUT_MS = 20_000;

export interface SvcProcess {
  /** `http://127.0.0.1:<port>` */
  readonly base: string;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  stop(): Promise<void>;
}

/** Thrown when the process ends before it listens; `output` says why (a refused setting names its key). */
export class SvcStartError extends Error {
  constructor(readonly output: string) {
    super(`svc start ended before listening:\n${output.slice(-4000)}`);
    this.name = 'SvcStartError';
  }
}

/** `env` adds to or overrides the defaults (ephemeral loopback listeners, one executor worker). */
export async function startSvcProcess(env: Record<string, string> = {}): Promise<SvcProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-dashboard-'));
  const child = spawn(process.execPath, [...SVC_COMMAND, 'start'], {
    cwd: dir,
    env: {
      PATH: process.env.PATH ?? '',
      SVC_HTTP_ADDR: '127.0.0.1:0',
      SVC_GRPC_ADDR: '127.0.0.1:0',
      SVC_METRICS_ADDR: '127.0.0.1:0',
      SVC_DATA_DIR: join(dir, 'data'),
      SVC_RUNTIME_EXECUTOR_WORKERS: '1',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const closed = new Promise<void>((resolve) => child.on('close', () => resolve()));
  const listening = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`svc start did not listen within ${START_TIMEOUT_MS} ms:\n${output.slice(-4000)}`));
    }, START_TIMEOUT_MS);
    const read = (chunk: Buffer): void => {
      output += chunk.toString();
      const line = output.split('\n').find((l) => l.includes('"msg":"listening"'));
      if (line === undefined) return;
      clearTimeout(timer);
      resolve((JSON.parse(line) as { http: string }).http);
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    void closed.then(() => {
      clearTimeout(timer);
      reject(new SvcStartError(output));
    });
  });
  const remove = (): void => rmSync(dir, { recursive: true, force: true });
  let address: string;
  try {
    address = await listening;
  } catch (err) {
    await closed;
    remove();
    throw err;
  }
  return {
    base: `http://${address}`,
    output: () => output,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const kill = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
        child.kill('SIGTERM');
        await closed;
        clearTimeout(kill);
      }
      remove();
    },
  };
}
