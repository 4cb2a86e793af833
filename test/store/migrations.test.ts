import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { MIGRATIONS, migrate, type Migration } from '../../src/store/migrations.js';
import { isStoreError, StoreError } from '../../src/store/store-error.js';
import { createStore } from '../../src/store/store.js';
import { newAgent, moduleBytes, tempDataDir, type TempDir } from './store-fixtures.js';

let dir: TempDir;
beforeEach(() => {
  dir = tempDataDir();
});
afterEach(() => dir.remove());

function raw(fileName = 'svc.db'): Database.Database {
  return new Database(join(dir.path, fileName));
}

function history(db: Database.Database): Array<{ version: number; name: string }> {
  return db.prepare<[], { version: number; name: string }>('SELECT version, name FROM schema_migrations ORDER BY version').all();
}

function tables(db: Database.Database): string[] {
  return db.prepare<[], string>("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name").pluck().all();
}

function refusal(fn: () => unknown): StoreError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof StoreError, `expected StoreError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected the store to refuse');
}

describe('migrations', () => {
  it('builds the schema from an empty file', () => {
    const db = raw();
    try {
      assert.deepEqual(migrate(db), { from: 0, to: MIGRATIONS.length });
      assert.deepEqual(tables(db), ['agents', 'api_keys', 'audit_log', 'meta', 'module_replicas', 'modules', 'refresh_families', 'refresh_tokens', 'schema_migrations']);
      assert.deepEqual(history(db), MIGRATIONS.map(({ version, name }) => ({ version, name })));
    } finally {
      db.close();
    }
  });

  it('is idempotent on re-open and keeps the data', () => {
    const first = createStore({ dataDir: dir.path });
    first.putAgentWithModule(newAgent(1), moduleBytes(1));
    first.close();
    const second = createStore({ dataDir: dir.path });
    try {
      assert.equal(second.countAgents(), 1);
    } finally {
      second.close();
    }
    const db = raw();
    try {
      assert.equal(migrate(db).from, MIGRATIONS.length);
      assert.equal(history(db).length, MIGRATIONS.length);
    } finally {
      db.close();
    }
  });

  it('refuses a database newer than the code, without touching it', () => {
    createStore({ dataDir: dir.path }).close();
    const db = raw();
    db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(MIGRATIONS.length + 1, 'from-the-future', 0);
    db.close();

    const err = refusal(() => createStore({ dataDir: dir.path }));
    assert.equal(err.kind, 'too_new');
    assert.match(err.message, /newer than this server knows/);
    assert.equal(err.metadata.schema_version, String(MIGRATIONS.length + 1));

    const after = raw();
    try {
      assert.equal(history(after).length, MIGRATIONS.length + 1);
    } finally {
      after.close();
    }
  });

  it('refuses a history that differs from the code at a known version', () => {
    createStore({ dataDir: dir.path }).close();
    const db = raw();
    db.prepare('UPDATE schema_migrations SET name = ? WHERE version = 1').run('another-lineage');
    db.close();
    assert.equal(refusal(() => createStore({ dataDir: dir.path })).kind, 'corrupt');
  });

  it('rolls a failed migration back entirely and stays at the previous version', () => {
    const broken: Migration = { version: MIGRATIONS.length + 1, name: 'broken', sql: 'CREATE TABLE half (x); SELECT * FROM missing_table;' };
    const db = raw();
    try {
      assert.throws(() => migrate(db, [...MIGRATIONS, broken]), /no such table: missing_table/);
      assert.ok(!tables(db).includes('half'));
      assert.equal(history(db).length, MIGRATIONS.length);
      assert.equal(db.inTransaction, false);
    } finally {
      db.close();
    }
  });

  it('rejects a migration list out of order', () => {
    const db = raw();
    try {
      assert.throws(() => migrate(db, [{ version: 2, name: 'skips-one', sql: '' }]), /expected 1/);
    } finally {
      db.close();
    }
  });

  it('refuses a file that is not a database', () => {
    writeFileSync(join(dir.path, 'svc.db'), Buffer.alloc(8192, 'not a database '));
    const err = refusal(() => createStore({ dataDir: dir.path }));
    assert.equal(err.kind, 'corrupt');
    assert.ok(isStoreError(err, 'corrupt'));
  });

  it('opens in WAL mode under the file name asked for', () => {
    const store = createStore({ dataDir: join(dir.path, 'nested', 'dir'), fileName: 'other.db' });
    assert.equal(store.path, join(dir.path, 'nested', 'dir', 'other.db'));
    store.close();
    const db = new Database(store.path);
    try {
      assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
    } finally {
      db.close();
    }
  });
});
