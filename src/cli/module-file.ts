/**
 * Reading the module file a command names (`agents deploy`, `check`). A file
 * that cannot be read is the command's input being wrong, so it fails like
 * any refused input: one `INVALID_ARGUMENT` line naming the file and the
 * system's reason, exit 4, instead of a bare Node error and exit 1.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { SvcError } from '../errors/svc-error.js';

/** `path` as the user wrote it, relative to `cwd`. */
export function readModuleFile(path: string, cwd: string): Uint8Array {
  try {
    return new Uint8Array(readFileSync(resolve(cwd, path)));
  } catch (error) {
    const cause = (error as NodeJS.ErrnoException).code ?? 'EIO';
    throw new SvcError('INVALID_ARGUMENT', `cannot read the module file ${path}`, { field: 'file', reason: 'unreadable', cause });
  }
}
