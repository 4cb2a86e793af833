/**
 * Storage faults on real storage (issue 41, item 3): a full tmpfs, a store
 * file even root cannot write (the immutable attribute), a damaged row. Each
 * failed write is a `StoreError` of its kind that changed nothing, the cause
 * is logged once, `status()` says why the store cannot write, and it says
 * writable again once a write check on the simulated clock succeeds.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { createSimulatedClock, type SimulatedClock } from '../../supervisors/index.js';
import { readIdentity } from '../../src/store/data-dir-identity.js';
import { WRITE_CHECK_INTERVAL_MS, type GuardedStore } from '../../src/store/guarded-store.js';
import { openStore, STORE_FILE } from '../../src/store/open-store.js';
import { isStoreError, type StoreErrorKind } from '../../src/store/store-error.js';
import { mountTmpfs, setImmutable } from '../helpers/tmpfs.js';
import { moduleBytes, newAgent, tempDataDir, type TempDir } from './store-fixtures.js';
import { recordingLog, type LogLine } from './store-log-fixture.js';

let lines: LogLine[];
let clock: SimulatedClock;
beforeEach(() => {
  lines = [];
  clock = createSimulatedClock();
});

const open = (dataDir: string): GuardedStore => openStore({ dataDir, recover: false, clock, log: recordingLog(lines), synchronous: 'normal' });
const faultLines = (): LogLine[] => lines.filter((l) => l.msg === 'the store cannot write');
const recoveryLines = (): LogLine[] => lines.filter((l) => l.msg === 'the store can write again');
const kind = (expected: StoreErrorKind) => (error: unknown) => isStoreError(error, expected);

function sqliteCode(line: LogLine | undefined): string | undefined {
  return (line?.fields.err as { code?: string } | undefined)?.code;
}

function acknowledged(dataDir: string): number {
  const reading = readIdentity(dataDir);
  return reading.state === 'present' ? reading.identity.acknowledgedDeploys : -1;
}

describe('guarded store: a full disk', () => {
  it('storage_full for every write while full, nothing half-written, the cause logged once; writable again once space is freed', (t) => {
    const fs = mountTmpfs(2 * 1024 * 1024);
    if ('skip' in fs) return t.skip(fs.skip);
    let store: GuardedStore | undefined;
    try {
      store = open(fs.path);
      store.putAgentWithModule(newAgent(0), moduleBytes(0, 8 * 1024));
      const filler = fs.fill();

      for (let i = 1; i <= 3; i++) assert.throws(() => store!.putAgentWithModule(newAgent(i), moduleBytes(i, 64 * 1024)), kind('full'));
      assert.throws(() => store!.deleteAgent(newAgent(0).agentId), kind('full'));
      assert.deepEqual(store.status(), { writable: false, reason: 'storage_full' });
      assert.equal(store.countAgents(), 1, 'no failed deploy left a row, and the failed undeploy kept its agent');
      assert.equal(acknowledged(fs.path), 1);
      assert.equal(faultLines().length, 1, 'logged once, not once a failed write');
      assert.equal(faultLines()[0]?.level, 'error');
      assert.equal(sqliteCode(faultLines()[0]), 'SQLITE_FULL');

      rmSync(filler);
      assert.equal(store.status().writable, false, 'no second write check within the interval');
      clock.increment(WRITE_CHECK_INTERVAL_MS);
      assert.deepEqual(store.status(), { writable: true });
      assert.equal(recoveryLines()[0]?.fields.failed_operations, 5, 'four failed writes and the failed check');
      store.putAgentWithModule(newAgent(1), moduleBytes(1, 8 * 1024));
      assert.equal(acknowledged(fs.path), 2);
    } finally {
      store?.close();
      fs.unmount();
    }
  });
});

describe('guarded store: a read-only store', () => {
  let dir: TempDir;
  let dbPath: string;
  beforeEach(() => {
    dir = tempDataDir();
    dbPath = join(dir.path, STORE_FILE);
  });
  afterEach(() => {
    setImmutable(dbPath, false);
    dir.remove();
  });

  it('a file SQLite could only open read-only: reads work, writes are storage_readonly from the start; writable again once the file is', (t) => {
    const seeded = open(dir.path);
    seeded.putAgentWithModule(newAgent(0), moduleBytes(0));
    seeded.close();
    const refused = setImmutable(dbPath, true);
    if (refused !== undefined) return t.skip(refused);

    const store = open(dir.path);
    try {
      assert.deepEqual(store.status(), { writable: false, reason: 'storage_readonly' }, 'known at start, before any deploy');
      assert.equal(sqliteCode(faultLines()[0]), 'SQLITE_READONLY');
      assert.equal(store.getAgent(newAgent(0).agentId)?.name, newAgent(0).name);
      assert.throws(() => store.putAgentWithModule(newAgent(1), moduleBytes(1)), kind('readonly'));
      clock.increment(WRITE_CHECK_INTERVAL_MS);
      assert.equal(store.status().writable, false, 'still read-only');

      setImmutable(dbPath, false);
      clock.increment(WRITE_CHECK_INTERVAL_MS);
      assert.deepEqual(store.status(), { writable: true }, 'the check reopened the file');
      store.putAgentWithModule(newAgent(1), moduleBytes(1));
      assert.equal(store.countAgents(), 2);
    } finally {
      store.close();
    }
  });
});

describe('guarded store: a damaged row', () => {
  it('storage_corrupt, and it stays so: a write check cannot mend a damaged database', () => {
    const dir = tempDataDir();
    const store = open(dir.path);
    try {
      store.putAgentWithModule(newAgent(0), moduleBytes(0));
      const db = new Database(join(dir.path, STORE_FILE));
      db.prepare("UPDATE agents SET resources = '{}' WHERE agent_id = ?").run(newAgent(0).agentId);
      db.close();
      assert.throws(() => store.getAgent(newAgent(0).agentId), kind('corrupt'));
      assert.deepEqual(store.status(), { writable: false, reason: 'storage_corrupt' });
      store.putAgentWithModule(newAgent(1), moduleBytes(1));
      clock.increment(WRITE_CHECK_INTERVAL_MS);
      assert.deepEqual(store.status(), { writable: false, reason: 'storage_corrupt' });
    } finally {
      store.close();
      dir.remove();
    }
  });
});
