/**
 * Opening the store at start, checked before anything is served from it:
 *
 * 1. `svc.db` missing or empty while the data directory recorded agents:
 *    refused before SQLite creates a new file over the loss;
 * 2. `PRAGMA quick_check`: a damaged file (a corrupt index) is refused here,
 *    not found at the next write; `--recover` rebuilds it from its tables
 *    (store-rebuild.ts), keeping the damaged file, and starts if that mended it;
 * 3. the database's node id and acknowledged counts against the data
 *    directory's record (store-verdict.ts): less than recorded is refused;
 * 4. one write, so a store that cannot write starts faulted (/ready 503)
 *    rather than failing its first deploy.
 *
 * Every refusal names what was found and how to accept it (`svc start
 * --recover`, the `recover` option), which logs what it accepted.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Clock } from '../../supervisors/index.js';
import { openIdentityFile, readIdentity, type DataDirIdentity, type IdentityReading } from './data-dir-identity.js';
import { createGuardedStore, type GuardedStore } from './guarded-store.js';
import { META_KEYS } from './meta-keys.js';
import { asStorageFault } from './storage-fault.js';
import { StoreError, isStorageFault, isStoreError } from './store-error.js';
import type { StoreLog } from './store-log.js';
import { rebuildFromTables } from './store-rebuild.js';
import { judgeStore, refusalMessage, type StoreFacts, type StoreFile } from './store-verdict.js';
import { createStore, type SynchronousMode } from './store.js';
import type { Store } from './types.js';

export const STORE_FILE = 'svc.db';

export interface OpenStoreOptions {
  dataDir: string;
  /** `svc start --recover`: accept what the checks find, and rebuild damaged indexes. */
  recover: boolean;
  clock: Clock;
  log: StoreLog;
  synchronous?: SynchronousMode;
}

const RECOVER_HINT = 'start once with `svc start --recover` to rebuild it from its tables (the damaged file is kept)';
const BACKUP_HINT = 'restore svc.db from a backup, or move it aside and start with `svc start --recover` to begin with an empty store';

/** A file-name-safe time, for the copies a recovery keeps. */
function stamp(): string {
  return new Date().toISOString().replace(/[:.]/g, '-');
}

function fileState(path: string): 'missing' | 'empty' | 'present' {
  if (!existsSync(path)) return 'missing';
  return statSync(path).size === 0 ? 'empty' : 'present';
}

/** A refusal, unless `recover` accepts it (logged). */
function decide(finding: string | undefined, options: OpenStoreOptions): void {
  if (finding === undefined) return;
  if (!options.recover) throw new StoreError('lost', refusalMessage(finding), { data_dir: options.dataDir });
  options.log.warn({ data_dir: options.dataDir, finding }, 'recover: accepted the store as found');
}

/** The write-ahead log and index of a store that is gone cannot be applied to a new one: kept aside, not replayed. */
function setAsideOrphans(path: string, log: StoreLog): void {
  for (const suffix of ['-wal', '-shm']) {
    if (!existsSync(path + suffix)) continue;
    const aside = `${path}${suffix}.orphaned-${stamp()}`;
    renameSync(path + suffix, aside);
    log.warn({ file: aside }, 'set aside the write-ahead files of a missing store');
  }
}

/** quick_check's findings; a file too damaged to walk at all is a finding too. */
function quickCheck(store: Store): string[] {
  try {
    return store.quickCheck();
  } catch (error) {
    if (isStorageFault(asStorageFault(error))) return [error instanceof Error ? error.message : String(error)];
    throw error;
  }
}

/** `path` and its write-ahead files renamed to `<name><suffix>`. */
function moveAside(path: string, suffix: string): string {
  for (const extra of ['-wal', '-shm']) if (existsSync(path + extra)) renameSync(path + extra, `${path}${suffix}${extra}`);
  renameSync(path, path + suffix);
  return path + suffix;
}

/** The store rebuilt from its tables (store-rebuild.ts) in place of the damaged file, which is kept beside it. */
function rebuild(store: Store, findings: readonly string[], options: OpenStoreOptions, open: () => Store): Store {
  const path = store.path;
  store.close();
  const rebuilt = `${path}.rebuilt`;
  for (const extra of ['', '-wal', '-shm']) rmSync(rebuilt + extra, { force: true });
  try {
    rebuildFromTables(path, rebuilt);
  } catch (error) {
    for (const extra of ['', '-wal', '-shm']) rmSync(rebuilt + extra, { force: true });
    const cause = error instanceof Error ? error.message : String(error);
    throw new StoreError('corrupt', `svc.db failed its integrity check (${findings.join('; ')}) and could not be rebuilt from its tables (${cause}): ${BACKUP_HINT}`);
  }
  const aside = moveAside(path, `.damaged-${stamp()}`);
  renameSync(rebuilt, path);
  options.log.warn({ findings, damaged_copy: aside }, 'recover: rebuilt the store from its tables; the damaged file is kept beside it');
  return open();
}

/** quick_check, and with `recover` the rebuild when it fails; throws `corrupt` naming the findings. Returns the store to go on with. */
function checkIntegrity(store: Store, options: OpenStoreOptions, open: () => Store): Store {
  const findings = quickCheck(store);
  if (findings.length === 0) return store;
  if (!options.recover) {
    throw new StoreError(
      'corrupt',
      `svc.db failed its integrity check (PRAGMA quick_check: ${findings.join('; ')}). The server refuses to start on a damaged store: ${RECOVER_HINT}, or ${BACKUP_HINT}`,
    );
  }
  const rebuilt = rebuild(store, findings, options, open);
  const left = quickCheck(rebuilt);
  if (left.length === 0) return rebuilt;
  rebuilt.close();
  throw new StoreError('corrupt', `svc.db still fails its integrity check after a rebuild (${left.join('; ')}): ${BACKUP_HINT}`);
}

function count(store: Store, key: string, otherwise: number): number {
  const value = store.getMeta(key);
  return value === undefined ? otherwise : Number(value);
}

function factsOf(store: Store): StoreFacts {
  const agents = store.countAgents();
  // A store written before the counts existed: every agent in it was a deploy, and nothing says how many undeploys.
  return {
    nodeId: store.getMeta(META_KEYS.nodeId),
    acknowledgedDeploys: count(store, META_KEYS.acknowledgedDeploys, agents),
    acknowledgedUndeploys: count(store, META_KEYS.acknowledgedUndeploys, 0),
    agents,
  };
}

/**
 * Writes what the store lacks (a new store's node id, the counts of an older
 * one) and the time of this check: one write at every start, so a store that
 * cannot write starts faulted (/ready 503) rather than failing its first
 * deploy. A fault is the guard's to record and report.
 */
function writeAtStart(store: GuardedStore, facts: StoreFacts, identity: DataDirIdentity): void {
  const missing: Array<[string, string]> = [[META_KEYS.writeCheckedAt, new Date().toISOString()]];
  if (facts.nodeId === undefined) missing.push([META_KEYS.nodeId, identity.nodeId]);
  if (store.getMeta(META_KEYS.acknowledgedDeploys) === undefined) missing.push([META_KEYS.acknowledgedDeploys, String(identity.acknowledgedDeploys)]);
  if (store.getMeta(META_KEYS.acknowledgedUndeploys) === undefined) missing.push([META_KEYS.acknowledgedUndeploys, String(identity.acknowledgedUndeploys)]);
  try {
    for (const [key, value] of missing) store.setMeta(key, value);
  } catch (error) {
    if (!isStorageFault(error)) throw error;
  }
}

function nodeIdFor(reading: IdentityReading, facts: StoreFacts): string {
  return facts.nodeId ?? (reading.state === 'present' ? reading.identity.nodeId : randomUUID());
}

export function openStore(options: OpenStoreOptions): GuardedStore {
  const { dataDir, log } = options;
  const path = join(dataDir, STORE_FILE);
  const reading = readIdentity(dataDir);
  const state = fileState(path);
  if (state !== 'present') {
    const file: StoreFile = state === 'missing' ? { state } : { state: 'empty' };
    const verdict = judgeStore(reading, file);
    decide(verdict.kind === 'refuse' ? verdict.finding : undefined, options);
    setAsideOrphans(path, log);
  }

  const open = (): Store => createStore({ dataDir, ...(options.synchronous === undefined ? {} : { synchronous: options.synchronous }) });
  let store: Store;
  try {
    store = open();
  } catch (error) {
    if (isStoreError(error, 'corrupt')) throw new StoreError('corrupt', `${error.message}. The server refuses to start on a damaged store: ${BACKUP_HINT}`, error.metadata, { cause: error });
    throw startFailure(error);
  }

  try {
    store = checkIntegrity(store, options, open);
    const facts = factsOf(store);
    if (state === 'present') {
      const verdict = judgeStore(reading, { state, facts });
      decide(verdict.kind === 'refuse' ? verdict.finding : undefined, options);
      if (verdict.kind === 'accept' && verdict.note !== undefined) log.info({ data_dir: dataDir }, verdict.note);
    }
    const identity: DataDirIdentity = {
      nodeId: nodeIdFor(reading, facts),
      acknowledgedDeploys: facts.acknowledgedDeploys,
      acknowledgedUndeploys: facts.acknowledgedUndeploys,
    };
    const guarded = createGuardedStore({ store, reopen: open, identity, identityFile: openIdentityFile(dataDir, identity), clock: options.clock, log });
    writeAtStart(guarded, facts, identity);
    return guarded;
  } catch (error) {
    store.close();
    throw startFailure(error);
  }
}

/** A failure while opening, as the operator reads it: refusals as they are, a storage fault with its cause. */
function startFailure(error: unknown): unknown {
  if (isStoreError(error)) return error;
  const mapped = asStorageFault(error);
  if (!isStorageFault(mapped)) return mapped;
  const cause = mapped.cause instanceof Error ? mapped.cause.message : mapped.message;
  const hint = mapped.kind === 'corrupt' ? `: ${BACKUP_HINT}` : '';
  return new StoreError(mapped.kind, `svc.db could not be opened (${cause})${hint}`, {}, { cause: mapped.cause });
}
