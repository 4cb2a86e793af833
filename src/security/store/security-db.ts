/**
 * The security tables' own connection to the server's SQLite file. Keys,
 * refresh tokens and audit records live beside the agents (one file to back
 * up), but on a connection of their own: the doors authenticate from the
 * moment they listen, before the store service of the supervision tree is
 * up, and whatever that service's restarts do. WAL lets both connections
 * read while one writes.
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { migrate } from '../../store/migrations.js';
import { BUSY_TIMEOUT_MS } from '../../store/store.js';

export interface SecurityDbOptions {
  dataDir: string;
  /** The store's file name; default the store's own (`svc.db`). */
  fileName?: string;
}

export function openSecurityDb(options: SecurityDbOptions): Database.Database {
  mkdirSync(options.dataDir, { recursive: true });
  const path = resolve(join(options.dataDir, options.fileName ?? 'svc.db'));
  const db = new Database(path, { timeout: BUSY_TIMEOUT_MS });
  try {
    db.pragma('journal_mode = WAL');
    // A key change is acknowledged once it survives power loss, as a deploy is; audit rows are written in batches.
    db.pragma('synchronous = FULL');
    db.pragma('foreign_keys = ON');
    migrate(db);
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}
