/**
 * The V8 heap limit the server runs under, from `runtime.heap_limit`. V8
 * sizes its heap when the process starts (a flag set later by
 * `v8.setFlagsFromString` changes nothing), so `svc start` with a limit
 * configured starts the server again as a child process with
 * `--max-old-space-size` and waits for it: the same command line, streams
 * and environment. The child finds the flag among its own Node flags and
 * runs the server itself, so this happens once.
 *
 * Signals: SIGTERM to this process is passed on to the server. A terminal's
 * Ctrl-C reaches both processes (one process group), so SIGINT is not passed
 * on: the server would take it twice and exit without draining. If this
 * process dies without passing anything on (SIGKILL), the server sees its
 * IPC channel close and drains as for SIGTERM, rather than run on orphaned.
 */
import { spawn } from 'node:child_process';

const MIB = 1024 * 1024;
const FLAG = '--max-old-space-size=';

/** The Node flags the server must run under for `heapLimitBytes`; undefined when `execArgv` already has them (or no limit is set). */
export function heapLimitExecArgv(execArgv: readonly string[], heapLimitBytes: number): string[] | undefined {
  if (heapLimitBytes <= 0) return undefined;
  const flag = `${FLAG}${Math.max(1, Math.floor(heapLimitBytes / MIB))}`;
  if (execArgv.includes(flag)) return undefined;
  return [...execArgv.filter((arg) => !arg.startsWith(FLAG)), flag];
}

/** Runs this process's command line again under `execArgv`; resolves with the child's exit code. */
export function runUnderHeapLimit(execArgv: readonly string[]): Promise<number> {
  // The IPC channel tells the server when this process is gone, even by SIGKILL: it drains then (start.ts).
  const child = spawn(process.execPath, [...execArgv, ...process.argv.slice(1)], { stdio: ['inherit', 'inherit', 'inherit', 'ipc'], env: process.env });
  const passOn = (): void => void child.kill('SIGTERM');
  // Caught here so the first SIGINT does not end this process before the server drained.
  const keep = (): void => undefined;
  process.on('SIGTERM', passOn);
  process.on('SIGINT', keep);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      process.off('SIGTERM', passOn);
      process.off('SIGINT', keep);
      resolve(code ?? (signal === null ? 1 : 128 + signalNumber(signal)));
    });
  });
}

const SIGNAL_NUMBERS: Readonly<Partial<Record<NodeJS.Signals, number>>> = { SIGINT: 2, SIGKILL: 9, SIGTERM: 15 };
const signalNumber = (signal: NodeJS.Signals): number => SIGNAL_NUMBERS[signal] ?? 1;
