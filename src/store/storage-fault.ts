/**
 * Which SQLite failures are the storage's fault rather than the request's, by
 * SQLite's (extended) result code: a full disk, a file the server may only
 * read, a damaged database, an I/O error, a lock another process holds past
 * the busy timeout. Each becomes a `StoreError` of its kind with the SQLite
 * error as its cause; anything else (a constraint, a programming error) is
 * not a storage fault and passes through unchanged.
 */
import Database from 'better-sqlite3';
import { StoreError, isStoreError, type StorageFaultKind } from './store-error.js';

/** SQLite's primary code is the part of the extended code before a second underscore: SQLITE_IOERR_WRITE is an IOERR. */
const BY_PRIMARY_CODE: Readonly<Record<string, StorageFaultKind>> = {
  SQLITE_FULL: 'full',
  SQLITE_READONLY: 'readonly',
  SQLITE_CORRUPT: 'corrupt',
  SQLITE_NOTADB: 'corrupt',
  SQLITE_IOERR: 'io',
  SQLITE_CANTOPEN: 'io',
  SQLITE_PROTOCOL: 'io',
  SQLITE_NOLFS: 'io',
  SQLITE_BUSY: 'busy',
  SQLITE_LOCKED: 'busy',
};

/** What a client is told; the cause (code, path) goes to the log only. */
const MESSAGES: Readonly<Record<StorageFaultKind, string>> = {
  full: 'the server cannot write its store: the disk is full',
  readonly: 'the server cannot write its store: the store is read-only',
  corrupt: 'the server cannot use its store: the database is damaged',
  io: 'the server cannot use its store: an I/O error occurred',
  busy: 'the server cannot use its store: another process holds its lock',
};

function primaryCode(code: string): string {
  const second = code.indexOf('_', 'SQLITE_'.length);
  return second === -1 ? code : code.slice(0, second);
}

/** The fault kind of a SQLite error, or undefined when it is not a storage fault. */
export function faultKindOf(error: unknown): StorageFaultKind | undefined {
  if (!(error instanceof Database.SqliteError)) return undefined;
  return BY_PRIMARY_CODE[primaryCode(error.code)];
}

/** `error` as a storage-fault `StoreError` when it is one; otherwise `error` itself. */
export function asStorageFault(error: unknown): unknown {
  if (isStoreError(error)) return error;
  const kind = faultKindOf(error);
  if (kind === undefined) return error;
  return new StoreError(kind, MESSAGES[kind], {}, { cause: error });
}
