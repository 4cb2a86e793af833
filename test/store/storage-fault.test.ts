/**
 * Which SQLite failures are storage faults (issue 41, item 3), by SQLite's
 * extended result codes, and that everything else passes through untouched.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { asStorageFault, faultKindOf } from '../../src/store/storage-fault.js';
import { isStorageFault, StoreError } from '../../src/store/store-error.js';

const sqlite = (code: string): InstanceType<typeof Database.SqliteError> => new Database.SqliteError(`failed with ${code}`, code);

describe('storage faults', () => {
  const table: Array<[string, string | undefined]> = [
    ['SQLITE_FULL', 'full'],
    ['SQLITE_READONLY', 'readonly'],
    ['SQLITE_READONLY_DBMOVED', 'readonly'],
    ['SQLITE_CORRUPT', 'corrupt'],
    ['SQLITE_CORRUPT_INDEX', 'corrupt'],
    ['SQLITE_NOTADB', 'corrupt'],
    ['SQLITE_IOERR_WRITE', 'io'],
    ['SQLITE_IOERR_FSYNC', 'io'],
    ['SQLITE_CANTOPEN', 'io'],
    ['SQLITE_BUSY', 'busy'],
    ['SQLITE_BUSY_SNAPSHOT', 'busy'],
    ['SQLITE_CONSTRAINT_UNIQUE', undefined],
    ['SQLITE_ERROR', undefined],
    ['SQLITE_MISMATCH', undefined],
  ];
  for (const [code, kind] of table) {
    it(`${code}: ${kind ?? 'not a storage fault'}`, () => {
      assert.equal(faultKindOf(sqlite(code)), kind);
      const mapped = asStorageFault(sqlite(code));
      assert.equal(isStorageFault(mapped), kind !== undefined);
      if (kind !== undefined) {
        assert.equal((mapped as StoreError).kind, kind);
        assert.equal((mapped as StoreError).cause instanceof Database.SqliteError, true, 'the SQLite error is kept as the cause');
        assert.doesNotMatch((mapped as StoreError).message, /SQLITE_|svc\.db/, 'no SQLite code or path in what a client reads');
      }
    });
  }

  it('passes through what is no SQLite error, and a StoreError as it is', () => {
    const plain = new TypeError('x');
    assert.equal(asStorageFault(plain), plain);
    const stored = new StoreError('conflict', 'taken');
    assert.equal(asStorageFault(stored), stored);
  });
});
