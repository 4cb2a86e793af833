/**
 * Real damage to real files, for the store and integration tests: an index
 * page overwritten, a table page overwritten, one write-ahead-log frame with
 * a flipped byte (what a torn or corrupted write leaves).
 */
import { closeSync, openSync, readSync, statSync, writeSync } from 'node:fs';
import Database from 'better-sqlite3';

/** SQLite's WAL: a 32-byte file header, then frames of a 24-byte header and one page (sqlite.org/fileformat2.html, section 4). */
const WAL_HEADER_BYTES = 32;
const WAL_FRAME_HEADER_BYTES = 24;

function rootPage(dbPath: string, name: string): { page: number; pageSize: number } {
  const db = new Database(dbPath, { readonly: true });
  try {
    const page = db.prepare<[string], number>('SELECT rootpage FROM sqlite_master WHERE name = ?').pluck().get(name);
    if (page === undefined) throw new Error(`no ${name} in ${dbPath}`);
    return { page, pageSize: db.pragma('page_size', { simple: true }) as number };
  } finally {
    db.close();
  }
}

function overwritePage(dbPath: string, page: number, pageSize: number): void {
  const fd = openSync(dbPath, 'r+');
  try {
    writeSync(fd, Buffer.alloc(pageSize, 0x5a), 0, pageSize, (page - 1) * pageSize);
  } finally {
    closeSync(fd);
  }
}

/** Overwrites the root page of index `name` of a closed database with garbage. */
export function damageIndex(dbPath: string, name = 'agents_by_created'): void {
  const { page, pageSize } = rootPage(dbPath, name);
  overwritePage(dbPath, page, pageSize);
}

/** Overwrites the root page of table `name` of a closed database with garbage. */
export function damageTable(dbPath: string, name = 'agents'): void {
  const { page, pageSize } = rootPage(dbPath, name);
  overwritePage(dbPath, page, pageSize);
}

/** Frames in a WAL file, and its page size. */
export function walFrames(walPath: string): { frames: number; pageSize: number } {
  const header = Buffer.alloc(WAL_HEADER_BYTES);
  const fd = openSync(walPath, 'r');
  try {
    readSync(fd, header, 0, WAL_HEADER_BYTES, 0);
  } finally {
    closeSync(fd);
  }
  const pageSize = header.readUInt32BE(8);
  return { frames: Math.floor((statSync(walPath).size - WAL_HEADER_BYTES) / (WAL_FRAME_HEADER_BYTES + pageSize)), pageSize };
}

/** Flips one byte in the page of frame `frame` (0-based): its checksum no longer matches, and SQLite's recovery stops there. */
export function damageWalFrame(walPath: string, frame: number): void {
  const { frames, pageSize } = walFrames(walPath);
  if (frame >= frames) throw new Error(`${walPath} has ${frames} frames, not ${frame + 1}`);
  const offset = WAL_HEADER_BYTES + frame * (WAL_FRAME_HEADER_BYTES + pageSize) + WAL_FRAME_HEADER_BYTES + 100;
  const fd = openSync(walPath, 'r+');
  try {
    const byte = Buffer.alloc(1);
    readSync(fd, byte, 0, 1, offset);
    byte[0] = (byte[0] ?? 0) ^ 0xff;
    writeSync(fd, byte, 0, 1, offset);
  } finally {
    closeSync(fd);
  }
}
