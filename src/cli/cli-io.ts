/**
 * What a command may touch of the world outside it: its output streams, the
 * environment, the working directory, time, and Ctrl-C. The process hands in
 * the real ones (main.ts); tests run commands in-process with their own, so
 * a `--watch` is driven by a simulated clock and stopped without a signal.
 */
import { homedir } from 'node:os';
import { createRealClock, type Clock } from '../../supervisors/index.js';

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  /** The user's home directory, where `~/.config/svc/config.toml` lives unless XDG_CONFIG_HOME says otherwise. */
  readonly home: string;
  readonly clock: Clock;
  /** Whether stdout is a terminal: a redrawn `--watch` table clears the screen only there. */
  readonly interactive: boolean;
  /** Calls `listener` on the first SIGINT or SIGTERM; returns the function that stops listening. */
  onInterrupt(listener: () => void): () => void;
}

export function processIo(): CliIo {
  return {
    out: (text) => void process.stdout.write(text),
    err: (text) => void process.stderr.write(text),
    env: process.env,
    cwd: process.cwd(),
    home: homedir(),
    clock: createRealClock(),
    interactive: process.stdout.isTTY === true,
    onInterrupt(listener) {
      const once = (): void => {
        stop();
        listener();
      };
      const stop = (): void => {
        process.off('SIGINT', once);
        process.off('SIGTERM', once);
      };
      process.on('SIGINT', once);
      process.on('SIGTERM', once);
      return stop;
    },
  };
}
