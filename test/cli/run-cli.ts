/**
 * Runs the `svc` CLI as a real process (see svc-command.ts),
 * in a given directory and with only the environment given, so neither the
 * repository's svc.toml nor the caller's SVC_* variables leak in.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { SVC_COMMAND } from '../helpers/svc-command.js';

/**
 * A CLI run that has not ended by then is killed, so a hang fails the test
 * instead of stalling it. Loading the CLI under tsx takes 3-4 s of CPU; on
 * two cores shared with other test processes that was measured at 28-34 s
 * of wall time, so 20 s killed healthy runs.
 */
const KILL_AFTER_MS = 90_000;

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  cwd: string;
  env?: Record<string, string>;
  /** Sends SIGTERM once stdout contains this. */
  untilStdout?: string;
}

export interface Running {
  readonly child: ChildProcess;
  readonly done: Promise<Run>;
  /** Resolves once stderr contains `text`. */
  stderrIncludes(text: string): Promise<void>;
}

export function startCli(args: readonly string[], options: RunOptions): Running {
  const child = spawn(process.execPath, [...SVC_COMMAND, ...args], {
    cwd: options.cwd,
    env: { PATH: process.env.PATH ?? '', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let signalled = false;
  const waiters: Array<{ text: string; resolve: () => void }> = [];
  const timer = setTimeout(() => child.kill('SIGKILL'), KILL_AFTER_MS);
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    if (options.untilStdout !== undefined && !signalled && stdout.includes(options.untilStdout)) {
      signalled = true;
      child.kill('SIGTERM');
    }
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    for (const waiter of waiters.filter((w) => stderr.includes(w.text))) waiter.resolve();
  });
  const done = new Promise<Run>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
  return {
    child,
    done,
    stderrIncludes(text) {
      if (stderr.includes(text)) return Promise.resolve();
      return new Promise((resolve, reject) => {
        waiters.push({ text, resolve });
        void done.then((run) => reject(new Error(`svc exited (${run.code}) before stderr said '${text}': ${run.stderr}`)));
      });
    },
  };
}

export function runCli(args: readonly string[], options: RunOptions): Promise<Run> {
  return startCli(args, options).done;
}
