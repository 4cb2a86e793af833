/**
 * A `CliIo` for running commands in-process: output collected in strings,
 * an environment and home directory of the test's choosing, a clock of the
 * test's choosing, and Ctrl-C pressed by calling `interrupt()`.
 */
import { createRealClock, type Clock } from '../../supervisors/index.js';
import type { CliIo } from '../../src/cli/cli-io.js';

export interface MemoryIo extends CliIo {
  readonly stdout: string;
  readonly stderr: string;
  /** As SIGINT would: calls the listeners registered now. */
  interrupt(): void;
  /** Resolves once stdout satisfies `test` (checked at every write). */
  stdoutMatches(test: (stdout: string) => boolean): Promise<void>;
}

export interface MemoryIoOptions {
  env?: Record<string, string>;
  cwd?: string;
  home?: string;
  clock?: Clock;
  interactive?: boolean;
}

export function memoryIo(options: MemoryIoOptions = {}): MemoryIo {
  let stdout = '';
  let stderr = '';
  const listeners = new Set<() => void>();
  const waiters: Array<{ test: (stdout: string) => boolean; resolve: () => void }> = [];
  return {
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
    out(text) {
      stdout += text;
      for (const waiter of waiters.filter((w) => w.test(stdout))) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    },
    err(text) {
      stderr += text;
    },
    env: options.env ?? {},
    cwd: options.cwd ?? process.cwd(),
    home: options.home ?? '/nonexistent-home',
    clock: options.clock ?? createRealClock(),
    interactive: options.interactive ?? false,
    onInterrupt(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    interrupt() {
      const now = [...listeners];
      listeners.clear();
      for (const listener of now) listener();
    },
    stdoutMatches(test) {
      if (test(stdout)) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ test, resolve }));
    },
  };
}
