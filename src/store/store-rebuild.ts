/**
 * The repair `svc start --recover` makes of a store that fails its integrity
 * check: a new file with the current schema, and every row of every table
 * copied in by a scan of the table itself. Neither REINDEX nor VACUUM INTO
 * mends a damaged index page: REINDEX first clears the old index (reading the
 * damaged page), and VACUUM's transfer optimisation copies index pages as
 * they are. A plain table scan reads no index, so damage confined to indexes
 * stays behind and the new file's indexes are built anew from the rows.
 * Damage to a table itself fails the copy, and the operator restores a backup.
 */
import { basename, dirname } from 'node:path';
import Database from 'better-sqlite3';
import { createStore } from './store.js';

/** Filled by the migrations when the new file is created; copying it too would repeat them. */
const SKIPPED_TABLE = 'schema_migrations';

export function rebuildFromTables(damagedPath: string, rebuiltPath: string): void {
  // The schema of the running code, made by the migrations as for any new store.
  createStore({ dataDir: dirname(rebuiltPath), fileName: basename(rebuiltPath) }).close();
  const db = new Database(rebuiltPath);
  try {
    // Rows arrive table by table; the checks run once all are in.
    db.pragma('foreign_keys = OFF');
    db.prepare('ATTACH DATABASE ? AS damaged').run(damagedPath);
    const tables = db
      .prepare<[string], string>("SELECT name FROM damaged.sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> ? ORDER BY rootpage")
      .pluck()
      .all(SKIPPED_TABLE);
    db.transaction(() => {
      // NOT INDEXED and a WHERE clause: a scan of the table, and no transfer optimisation.
      for (const table of tables) db.exec(`INSERT INTO main."${table}" SELECT * FROM damaged."${table}" NOT INDEXED WHERE true`);
    })();
    db.exec('DETACH DATABASE damaged');
    const dangling = db.pragma('foreign_key_check') as unknown[];
    if (dangling.length > 0) throw new Error(`${dangling.length} rows point at rows the damaged file no longer has`);
  } finally {
    db.close();
  }
}
