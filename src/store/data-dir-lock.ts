/**
 * One server per data directory. The lock is an exclusive SQLite lock on
 * `svc.lock`, held for the server's life: SQLite takes it with the operating
 * system's advisory record locks, which the kernel releases when the process
 * ends however it ends, so a server killed with SIGKILL leaves no stale lock.
 * (Node has no `flock`; SQLite is the locking library already in the process: docs/adr/0005-data-directory-lock.md.)
 * The holder writes its pid to `svc.pid` so a refused start can name it.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { StoreError } from './store-error.js';

export const LOCK_FILE = 'svc.lock';
export const PID_FILE = 'svc.pid';

export interface DataDirLock {
  readonly dataDir: string;
  /** Removes the pid file, then lets go of the lock. Idempotent. */
  release(): void;
}

function holderPid(dataDir: string): string | undefined {
  try {
    const text = readFileSync(join(dataDir, PID_FILE), 'utf8').trim();
    return /^\d+$/.test(text) ? text : undefined;
  } catch {
    return undefined;
  }
}

function isBusy(error: unknown): boolean {
  return error instanceof Database.SqliteError && (error.code.startsWith('SQLITE_BUSY') || error.code.startsWith('SQLITE_LOCKED'));
}

/** Takes the lock of `dataDir` (which must exist) or throws `locked`, naming the holder's pid when it wrote one. */
export function lockDataDir(dataDir: string): DataDirLock {
  // timeout 0: a held lock is refused at once instead of waited for.
  const db = new Database(join(dataDir, LOCK_FILE), { timeout: 0 });
  try {
    // EXCLUSIVE locking mode keeps the lock of the first write until the connection closes.
    db.pragma('locking_mode = EXCLUSIVE');
    db.pragma('journal_mode = OFF');
    db.exec('CREATE TABLE IF NOT EXISTS holder (pid INTEGER NOT NULL)');
    // A write that changes a page: committing it takes the EXCLUSIVE lock, which the connection then keeps.
    db.transaction(() => {
      db.exec('DELETE FROM holder');
      db.prepare('INSERT INTO holder (pid) VALUES (?)').run(process.pid);
    })();
  } catch (error) {
    db.close();
    if (!isBusy(error)) throw error;
    const pid = holderPid(dataDir);
    throw new StoreError(
      'locked',
      `the data directory ${dataDir} is in use by another svc server${pid === undefined ? '' : ` (pid ${pid})`}; stop it first, or give this one another storage.data_dir`,
      { data_dir: dataDir, ...(pid === undefined ? {} : { pid }) },
      { cause: error },
    );
  }
  writeFileSync(join(dataDir, PID_FILE), `${process.pid}\n`);
  let held = true;
  return {
    dataDir,
    release() {
      if (!held) return;
      held = false;
      rmSync(join(dataDir, PID_FILE), { force: true });
      db.close();
    },
  };
}
