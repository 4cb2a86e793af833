/**
 * Opening the store at start (issue 41, item 4): the data directory's record
 * against the database, on real files damaged the way the attacks damaged
 * them; each refusal names what was found, and `recover` accepts it.
 */
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, readdirSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { createSimulatedClock } from '../../supervisors/index.js';
import { readIdentity, IDENTITY_FILE } from '../../src/store/data-dir-identity.js';
import type { GuardedStore } from '../../src/store/guarded-store.js';
import { META_KEYS } from '../../src/store/meta-keys.js';
import { openStore, STORE_FILE } from '../../src/store/open-store.js';
import { isStoreError, type StoreErrorKind } from '../../src/store/store-error.js';
import { damageIndex, damageTable, damageWalFrame, walFrames } from './damage.js';
import { moduleBytes, newAgent, tempDataDir, type TempDir } from './store-fixtures.js';
import { recordingLog, type LogLine } from './store-log-fixture.js';

let dir: TempDir;
let lines: LogLine[];
beforeEach(() => {
  dir = tempDataDir();
  lines = [];
});
afterEach(() => dir.remove());

function open(recover = false, dataDir = dir.path): GuardedStore {
  return openStore({ dataDir, recover, clock: createSimulatedClock(), log: recordingLog(lines), synchronous: 'normal' });
}

/** A store with `deploys` agents of which the first `undeploys` were undeployed, closed. */
function seeded(deploys: number, undeploys = 0, dataDir = dir.path): string {
  const store = open(false, dataDir);
  for (let i = 0; i < deploys; i++) store.putAgentWithModule(newAgent(i), moduleBytes(i % 4));
  for (let i = 0; i < undeploys; i++) store.deleteAgent(newAgent(i).agentId);
  const nodeId = store.nodeId;
  store.close();
  return nodeId;
}

function refused(kind: StoreErrorKind, message: RegExp): (error: unknown) => boolean {
  return (error) => {
    assert.ok(isStoreError(error, kind), `expected a ${kind} StoreError, got ${String(error)}`);
    assert.match(error.message, message);
    return true;
  };
}

const dbPath = (): string => join(dir.path, STORE_FILE);
const recovered = (): LogLine[] => lines.filter((l) => l.msg.startsWith('recover:'));

describe('open store: a new data directory', () => {
  it('generates a node id and records it with the counts outside the database; a restart keeps both', () => {
    const store = open();
    const nodeId = store.nodeId;
    assert.match(nodeId, /^[0-9a-f-]{36}$/);
    store.putAgentWithModule(newAgent(1), moduleBytes(1));
    store.putAgentWithModule(newAgent(2), moduleBytes(2));
    store.deleteAgent(newAgent(1).agentId);
    assert.deepEqual(readIdentity(dir.path), { state: 'present', identity: { nodeId, acknowledgedDeploys: 2, acknowledgedUndeploys: 1 } });
    assert.equal(store.getMeta(META_KEYS.acknowledgedDeploys), '2');
    assert.equal(store.getMeta(META_KEYS.acknowledgedUndeploys), '1');
    store.close();
    const again = open();
    assert.equal(again.nodeId, nodeId);
    assert.equal(again.countAgents(), 1);
    again.close();
  });

  it('a failed write counts nothing: a taken name leaves the counts as they were', () => {
    const store = open();
    store.putAgentWithModule(newAgent(1), moduleBytes(1));
    assert.throws(() => store.putAgentWithModule(newAgent(2, { name: newAgent(1).name }), moduleBytes(2)), (e) => isStoreError(e, 'conflict'));
    assert.equal(store.getMeta(META_KEYS.acknowledgedDeploys), '1');
    store.close();
    const reading = readIdentity(dir.path);
    assert.equal(reading.state === 'present' ? reading.identity.acknowledgedDeploys : -1, 1);
  });

  it('adopts a store written before the counts existed: every agent counts as a deploy', () => {
    seeded(3);
    const db = new Database(dbPath());
    db.prepare('DELETE FROM meta WHERE key IN (?, ?)').run(META_KEYS.acknowledgedDeploys, META_KEYS.acknowledgedUndeploys);
    db.close();
    rmSync(join(dir.path, IDENTITY_FILE));
    const store = open();
    assert.equal(store.getMeta(META_KEYS.acknowledgedDeploys), '3');
    assert.equal(store.getMeta(META_KEYS.acknowledgedUndeploys), '0');
    store.close();
    assert.ok(lines.some((l) => l.msg.includes('no svc.identity yet')));
  });
});

describe('open store: a store that lost what the directory recorded', () => {
  it('svc.db missing where agents were: refused without creating a new file; recover starts empty with the same node id', () => {
    const nodeId = seeded(3);
    rmSync(dbPath());
    assert.throws(() => open(), refused('lost', /^svc\.db is missing, but this data directory recorded 3 agents .* `svc start --recover`/));
    assert.equal(existsSync(dbPath()), false, 'the refusal created no new svc.db');
    const store = open(true);
    assert.equal(store.nodeId, nodeId);
    assert.equal(store.countAgents(), 0);
    store.close();
    assert.deepEqual(readIdentity(dir.path), { state: 'present', identity: { nodeId, acknowledgedDeploys: 0, acknowledgedUndeploys: 0 } });
    assert.equal(recovered().length, 1);
    open().close();
  });

  it('svc.db truncated to zero bytes: refused; recover accepts', () => {
    seeded(219);
    truncateSync(dbPath(), 0);
    assert.throws(() => open(), refused('lost', /^svc\.db is empty \(0 bytes\), but this data directory recorded 219 agents/));
    open(true).close();
  });

  it('a missing svc.db is no loss when every agent was undeployed', () => {
    const nodeId = seeded(2, 2);
    rmSync(dbPath());
    const store = open();
    assert.equal(store.nodeId, nodeId);
    store.close();
  });

  it('an older copy of svc.db put back: refused naming the deploys it lacks; recover accepts its counts', () => {
    seeded(2);
    copyFileSync(dbPath(), join(dir.path, 'old.db'));
    const store = open();
    for (let i = 10; i < 13; i++) store.putAgentWithModule(newAgent(i), moduleBytes(i));
    store.close();
    copyFileSync(join(dir.path, 'old.db'), dbPath());
    assert.throws(() => open(), refused('lost', /^svc\.db holds 2 agents after 2 deploys and 0 undeploys, but this data directory recorded 5 agents .*: 3 deploys acknowledged earlier are missing/));
    open(true).close();
    const reading = readIdentity(dir.path);
    assert.equal(reading.state === 'present' ? reading.identity.acknowledgedDeploys : -1, 2);
    open().close();
  });

  it("another node's svc.db: refused naming both nodes", () => {
    const other = tempDataDir();
    try {
      const otherNode = seeded(1, 0, other.path);
      seeded(1);
      copyFileSync(join(other.path, STORE_FILE), dbPath());
      assert.throws(() => open(), refused('lost', new RegExp(`^svc\\.db belongs to node ${otherNode}, but this data directory recorded 1 agent `)));
    } finally {
      other.remove();
    }
  });

  it('an unreadable svc.identity: refused; recover writes it again from the store', () => {
    seeded(2);
    writeFileSync(join(dir.path, IDENTITY_FILE), '{"node_id":');
    assert.throws(() => open(), refused('lost', /^svc\.identity could not be read/));
    open(true).close();
    const reading = readIdentity(dir.path);
    assert.equal(reading.state === 'present' ? reading.identity.acknowledgedDeploys : -1, 2);
  });

  it('a damaged write-ahead-log frame after a crash: the deploys after it are refused as missing, not dropped silently', () => {
    const store = open();
    for (let i = 0; i < 40; i++) store.putAgentWithModule(newAgent(i), moduleBytes(i));
    // What a crash leaves: the database file, its log and the record, copied while the writer still runs.
    const crashed = tempDataDir();
    try {
      for (const file of [STORE_FILE, `${STORE_FILE}-wal`, IDENTITY_FILE]) copyFileSync(join(dir.path, file), join(crashed.path, file));
      const wal = join(crashed.path, `${STORE_FILE}-wal`);
      damageWalFrame(wal, Math.floor(walFrames(wal).frames / 2));
      assert.throws(() => open(false, crashed.path), refused('lost', /deploys acknowledged earlier are missing \(a replaced or truncated file, or a damaged write-ahead log\)/));
      const accepted = open(true, crashed.path);
      assert.ok(accepted.countAgents() < 40 && accepted.countAgents() > 0, `${accepted.countAgents()} agents survived the damaged frame`);
      accepted.close();
    } finally {
      store.close();
      crashed.remove();
    }
  });
});

describe('open store: a damaged file', () => {
  it('a corrupt index: quick_check refuses the start; recover rebuilds the store from its tables and keeps the damaged file', () => {
    seeded(50, 5);
    damageIndex(dbPath(), 'agents_by_created');
    assert.throws(() => open(), refused('corrupt', /^svc\.db failed its integrity check \(PRAGMA quick_check: .*\)\. The server refuses to start .* `svc start --recover`/));
    const store = open(true);
    assert.deepEqual(store.quickCheck(), []);
    assert.equal(store.countAgents(), 45);
    assert.equal(store.listAgents({ pageSize: 1000 }).agents.length, 45, 'the rebuilt index lists every agent');
    store.putAgentWithModule(newAgent(99), moduleBytes(99));
    store.close();
    assert.ok(readdirSync(dir.path).some((f) => f.startsWith(`${STORE_FILE}.damaged-`)), 'the damaged file is kept');
    assert.equal(recovered().length, 1);
    open().close();
  });

  it('a unique index damaged: rebuilt all the same', () => {
    seeded(20);
    damageIndex(dbPath(), 'sqlite_autoindex_agents_2');
    assert.throws(() => open(), refused('corrupt', /integrity check/));
    const store = open(true);
    assert.throws(() => store.putAgentWithModule(newAgent(30, { name: newAgent(3).name }), moduleBytes(3)), (e) => isStoreError(e, 'conflict'), 'names are unique again');
    store.close();
  });

  it('a damaged table: recover cannot rebuild it and says to restore a backup', () => {
    seeded(50);
    damageTable(dbPath(), 'agents');
    assert.throws(() => open(), refused('corrupt', /integrity check/));
    assert.throws(() => open(true), refused('corrupt', /could not be rebuilt from its tables .*restore svc\.db from a backup/));
    assert.equal(existsSync(`${dbPath()}.rebuilt`), false, 'the failed rebuild left nothing behind');
  });

  it('a file that is no database: refused, naming it', () => {
    writeFileSync(dbPath(), 'not a database, but long enough to have a header of its own...........................................');
    assert.throws(() => open(), refused('corrupt', /is not a readable svc database.*restore svc\.db from a backup/));
  });
});
