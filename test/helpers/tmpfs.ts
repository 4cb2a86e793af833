/**
 * A real small filesystem for tests of a full disk: a tmpfs the test mounts
 * (we run as root) and unmounts. Where mounting is impossible (not root, no
 * CAP_SYS_ADMIN in a container) it says why, and the test skips with that
 * reason rather than passing silently.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmdirSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Tmpfs {
  readonly path: string;
  /** Writes a file until the filesystem is full; returns its path (remove it to free the space). */
  fill(): string;
  unmount(): void;
}

export type TmpfsOrSkip = Tmpfs | { skip: string };

export function mountTmpfs(sizeBytes: number): TmpfsOrSkip {
  if (process.getuid?.() !== 0) return { skip: 'mounting a tmpfs for a full disk needs root' };
  const path = mkdtempSync(join(tmpdir(), 'svc-tmpfs-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeBytes},mode=0755`, 'tmpfs', path], { stdio: 'pipe' });
  } catch (error) {
    rmdirSync(path);
    const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim();
    return { skip: `cannot mount a tmpfs here: ${stderr || String(error)}` };
  }
  return {
    path,
    fill() {
      const filler = join(path, 'filler');
      const fd = openSync(filler, 'w');
      const chunk = Buffer.alloc(64 * 1024, 0xaa);
      try {
        for (let size = chunk.length; size >= 1; size = Math.floor(size / 2)) {
          // Smaller and smaller writes take the last free bytes too.
          for (;;) {
            try {
              writeSync(fd, chunk, 0, size);
            } catch (error) {
              if ((error as NodeJS.ErrnoException).code === 'ENOSPC') break;
              throw error;
            }
          }
        }
      } finally {
        closeSync(fd);
      }
      return filler;
    },
    unmount() {
      execFileSync('umount', [path], { stdio: 'pipe' });
      rmdirSync(path);
    },
  };
}

/** Sets or clears the immutable attribute (chattr), which even root cannot write through; undefined when it worked, else why not. */
export function setImmutable(path: string, immutable: boolean): string | undefined {
  try {
    execFileSync('chattr', [immutable ? '+i' : '-i', path], { stdio: 'pipe' });
    return undefined;
  } catch (error) {
    return `chattr is not usable here: ${(error as { stderr?: Buffer }).stderr?.toString().trim() || String(error)}`;
  }
}
