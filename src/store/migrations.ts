/**
 * Versioned schema. Migrations are an ordered list, versions 1..n; each runs
 * in its own transaction together with its row in `schema_migrations`, so a
 * failed migration leaves the database at the previous version. Released
 * migrations are never edited: a change is a new entry at the end.
 */
import type Database from 'better-sqlite3';
import { MODULE_VERSIONS_MIGRATION } from './migration-module-versions.js';
import { REPLICAS_MIGRATION } from './migration-replicas.js';
import { SECURITY_MIGRATION } from './migration-security.js';
import { StoreError } from './store-error.js';

export interface Migration {
  version: number;
  /** Recorded with the version; a different name at the same version means another schema lineage. */
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'agents-modules-meta',
    // Module blobs live in the same SQLite file as the agents that reference
    // them, so one transaction makes an agent and its module durable together
    // (DESIGN.md section 5 puts both under the data dir). A rowid table, not
    // WITHOUT ROWID: SQLite advises against the latter for rows this large.
    sql: `
      CREATE TABLE modules (
        sha256     TEXT PRIMARY KEY CHECK (length(sha256) = 64),
        bytes      BLOB NOT NULL,
        size       INTEGER NOT NULL CHECK (size = length(bytes)),
        created_at INTEGER NOT NULL
      );
      CREATE TABLE agents (
        agent_id      TEXT PRIMARY KEY,
        name          TEXT NOT NULL UNIQUE,
        capabilities  TEXT NOT NULL CHECK (json_valid(capabilities)),
        resources     TEXT NOT NULL CHECK (json_valid(resources)),
        module_sha256 TEXT NOT NULL REFERENCES modules (sha256),
        desired_state TEXT NOT NULL CHECK (desired_state IN ('running', 'stopped')),
        restart_count INTEGER NOT NULL DEFAULT 0 CHECK (restart_count >= 0),
        node_id       TEXT NOT NULL,
        created_at    INTEGER NOT NULL,
        updated_at    INTEGER NOT NULL
      );
      -- Keyset paging walks this index.
      CREATE INDEX agents_by_created ON agents (created_at, agent_id);
      -- "Is this module still referenced?" on undeploy, and the foreign-key check on module delete.
      CREATE INDEX agents_by_module ON agents (module_sha256);
      CREATE TABLE meta (
        key   TEXT PRIMARY KEY,
        value TEXT NOT NULL
      ) WITHOUT ROWID;
    `,
  },
  SECURITY_MIGRATION,
  REPLICAS_MIGRATION,
  MODULE_VERSIONS_MIGRATION,
];

export interface MigrationResult {
  /** Schema version found on open (0 for a new file). */
  from: number;
  to: number;
}

/**
 * Brings `db` to the last version of `migrations`. Safe to run on every open
 * and from two processes at once: the pending check is repeated inside each
 * write transaction. Refuses (`too_new`) a database written by newer code.
 */
export function migrate(db: Database.Database, migrations: readonly Migration[] = MIGRATIONS): MigrationResult {
  checkOrdered(migrations);
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    applied_at INTEGER NOT NULL
  )`);
  const applied = db.prepare<[], { version: number; name: string }>('SELECT version, name FROM schema_migrations ORDER BY version');
  const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');

  const from = checkApplied(applied.all(), migrations);
  for (const migration of migrations.slice(from)) {
    db.transaction(() => {
      // Another process may have applied it since we looked.
      if (checkApplied(applied.all(), migrations) >= migration.version) return;
      db.exec(migration.sql);
      record.run(migration.version, migration.name, Date.now());
    }).immediate();
  }
  return { from, to: migrations.length };
}

/** Returns the current version after checking the recorded history against the code's. */
function checkApplied(rows: readonly { version: number; name: string }[], migrations: readonly Migration[]): number {
  const known = migrations.length;
  const newest = rows.at(-1)?.version ?? 0;
  if (newest > known) {
    throw new StoreError(
      'too_new',
      `database schema version ${newest} is newer than this server knows (${known}); upgrade the server or use another data dir`,
      { schema_version: String(newest), known_version: String(known) },
    );
  }
  rows.forEach((row, index) => {
    const expected = migrations[index];
    if (row.version !== index + 1 || row.name !== expected?.name) {
      throw new StoreError('corrupt', `schema history does not match this server at version ${row.version} (${row.name})`, {
        schema_version: String(row.version),
      });
    }
  });
  return newest;
}

function checkOrdered(migrations: readonly Migration[]): void {
  migrations.forEach((migration, index) => {
    if (migration.version !== index + 1) {
      throw new Error(`migration "${migration.name}" has version ${migration.version}, expected ${index + 1}`);
    }
  });
}
