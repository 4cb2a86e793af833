import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { isStoreError, type StoreErrorKind } from '../../src/store/store-error.js';
import { createStore, DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../../src/store/store.js';
import type { AgentRecord, Store } from '../../src/store/types.js';
import { encodePageToken } from '../../src/store/page-token.js';
import { newAgent, moduleBytes, tempDataDir, type TempDir } from './store-fixtures.js';

let dir: TempDir;
let store: Store;
// An fsync per commit changes nothing these tests check and makes seeding
// thousands of agents slow; the crash and migration tests use the default.
const open = (): Store => createStore({ dataDir: dir.path, synchronous: 'normal' });

beforeEach(() => {
  dir = tempDataDir();
  store = open();
});
afterEach(() => {
  store.close();
  dir.remove();
});

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');
const isKind = (kind: StoreErrorKind) => (err: unknown) => isStoreError(err, kind);

function moduleCount(): number {
  const db = new Database(store.path, { readonly: true });
  try {
    return db.prepare<[], number>('SELECT count(*) FROM modules').pluck().get() ?? 0;
  } finally {
    db.close();
  }
}

/** Stores `count` agents in a shuffled order with clashing creation times, so list order is not insertion order. */
function seed(count: number): AgentRecord[] {
  const indices = Array.from({ length: count }, (_, i) => i);
  for (let i = indices.length - 1; i > 0; i--) {
    const j = (i * 7919) % (i + 1);
    [indices[i], indices[j]] = [indices[j] as number, indices[i] as number];
  }
  const shared = moduleBytes(0);
  return indices.map((i) => store.putAgentWithModule(newAgent(i, { createdAt: 1_000 + Math.floor(i / 7) }), shared));
}

function byKey(a: AgentRecord, b: AgentRecord): number {
  return a.createdAt - b.createdAt || (a.agentId < b.agentId ? -1 : a.agentId > b.agentId ? 1 : 0);
}

describe('store: agents and modules', () => {
  it('stores an agent with its module and reads both back', () => {
    const bytes = moduleBytes(1, 12 * 1024);
    const stored = store.putAgentWithModule(newAgent(1), bytes);
    assert.deepEqual(stored, {
      ...newAgent(1),
      moduleSha256: sha256(bytes),
      moduleSize: bytes.byteLength,
      moduleVersion: 1,
      previousModule: null,
      restartCount: 0,
      updatedAt: newAgent(1).createdAt,
    });
    assert.deepEqual(store.getAgent(stored.agentId), stored);
    assert.deepEqual(new Uint8Array(store.getModule(stored.moduleSha256) ?? []), bytes);
    assert.equal(store.getAgent('agent-missing'), undefined);
    assert.equal(store.getModule('0'.repeat(64)), undefined);
    assert.equal(store.countAgents(), 1);
  });

  it('refuses a second agent with the same name and writes nothing', () => {
    store.putAgentWithModule(newAgent(1, { name: 'unique' }), moduleBytes(1));
    const fresh = moduleBytes(2);
    assert.throws(
      () => store.putAgentWithModule(newAgent(2, { name: 'unique' }), fresh),
      (err) => isStoreError(err, 'conflict') && err.metadata.field === 'name' && /unique/.test(err.message),
    );
    assert.equal(store.countAgents(), 1);
    assert.equal(store.getModule(sha256(fresh)), undefined, 'the module insert was rolled back with the agent');
  });

  it('refuses a second agent with the same id', () => {
    store.putAgentWithModule(newAgent(1), moduleBytes(1));
    assert.throws(
      () => store.putAgentWithModule(newAgent(1, { name: 'other-name' }), moduleBytes(1)),
      (err) => isStoreError(err, 'conflict') && err.metadata.field === 'agent_id',
    );
  });

  it('stores a module once and collects it only after its last agent goes', () => {
    const bytes = moduleBytes(7);
    const a = store.putAgentWithModule(newAgent(1), bytes);
    const b = store.putAgentWithModule(newAgent(2), bytes);
    store.putAgentWithModule(newAgent(3), moduleBytes(8));
    assert.equal(a.moduleSha256, b.moduleSha256);
    assert.equal(moduleCount(), 2);

    assert.deepEqual(store.deleteAgent(a.agentId), { moduleSha256: a.moduleSha256, moduleCollected: false });
    assert.ok(store.getModule(a.moduleSha256));
    assert.equal(store.getAgent(a.agentId), undefined);

    assert.deepEqual(store.deleteAgent(b.agentId), { moduleSha256: a.moduleSha256, moduleCollected: true });
    assert.equal(store.getModule(a.moduleSha256), undefined);
    assert.equal(moduleCount(), 1);
    assert.equal(store.countAgents(), 1);
  });

  it('reports an unknown agent on delete and update as not_found', () => {
    assert.throws(() => store.deleteAgent('agent-missing'), isKind('not_found'));
    assert.throws(() => store.updateAgent('agent-missing', { updatedAt: 1 }), isKind('not_found'));
  });

  it('updates only the fields in the patch', () => {
    const stored = store.putAgentWithModule(newAgent(1), moduleBytes(1));
    store.updateAgent(stored.agentId, { restartCount: 3, updatedAt: stored.createdAt + 10 });
    assert.deepEqual(store.getAgent(stored.agentId), { ...stored, restartCount: 3, updatedAt: stored.createdAt + 10 });
    store.updateAgent(stored.agentId, { desiredState: 'stopped', updatedAt: stored.createdAt + 20 });
    assert.deepEqual(store.getAgent(stored.agentId), { ...stored, restartCount: 3, desiredState: 'stopped', updatedAt: stored.createdAt + 20 });
  });

  it('keeps key/value metadata', () => {
    assert.equal(store.getMeta('node_id'), undefined);
    store.setMeta('node_id', 'node-a');
    store.setMeta('node_id', 'node-b');
    assert.equal(store.getMeta('node_id'), 'node-b');
  });

  it('keeps everything across close and re-open', () => {
    const kept = store.putAgentWithModule(newAgent(1), moduleBytes(1));
    const gone = store.putAgentWithModule(newAgent(2), moduleBytes(2));
    store.updateAgent(kept.agentId, { restartCount: 1, updatedAt: kept.createdAt + 1 });
    store.deleteAgent(gone.agentId);
    store.setMeta('node_id', 'node-a');
    store.close();
    store.close();

    store = open();
    assert.deepEqual([...store.allAgents()], [{ ...kept, restartCount: 1, updatedAt: kept.createdAt + 1 }]);
    assert.deepEqual(new Uint8Array(store.getModule(kept.moduleSha256) ?? []), moduleBytes(1));
    assert.equal(store.getModule(gone.moduleSha256), undefined);
    assert.equal(store.getMeta('node_id'), 'node-a');
  });

  it('reports a damaged row as corrupt, naming the agent', () => {
    const stored = store.putAgentWithModule(newAgent(1), moduleBytes(1));
    const db = new Database(store.path);
    db.prepare('UPDATE agents SET capabilities = ? WHERE agent_id = ?').run('{"not":"a list"}', stored.agentId);
    db.close();
    assert.throws(
      () => store.getAgent(stored.agentId),
      (err) => isStoreError(err, 'corrupt') && err.metadata.agent_id === stored.agentId && err.metadata.column === 'capabilities',
    );
  });
});

describe('store: listing', () => {
  it('pages through 250 agents 100 at a time in (created_at, agent_id) order', () => {
    const expected = seed(250).sort(byKey);
    const pages: AgentRecord[][] = [];
    let pageToken = '';
    for (let guard = 0; guard < 10; guard++) {
      const page = store.listAgents({ pageSize: 100, pageToken });
      pages.push(page.agents);
      pageToken = page.nextPageToken;
      if (pageToken === '') break;
    }
    assert.deepEqual(pages.map((p) => p.length), [100, 100, 50]);
    assert.deepEqual(pages.flat(), expected);
  });

  it('gives no token when the last page is exactly full', () => {
    seed(200);
    const first = store.listAgents({ pageSize: 100 });
    const second = store.listAgents({ pageSize: 100, pageToken: first.nextPageToken });
    assert.equal(second.agents.length, 100);
    assert.equal(second.nextPageToken, '');
  });

  it('uses the default for 0 or no size, caps large sizes and rejects negative ones', () => {
    seed(MAX_PAGE_SIZE + 1);
    assert.equal(store.listAgents().agents.length, DEFAULT_PAGE_SIZE);
    assert.equal(store.listAgents({ pageSize: 0 }).agents.length, DEFAULT_PAGE_SIZE);
    const capped = store.listAgents({ pageSize: MAX_PAGE_SIZE * 10 });
    assert.equal(capped.agents.length, MAX_PAGE_SIZE);
    assert.notEqual(capped.nextPageToken, '');
    assert.throws(() => store.listAgents({ pageSize: -1 }), RangeError);
    assert.throws(() => store.listAgents({ pageSize: 1.5 }), RangeError);
  });

  it('lists an empty store as one empty page', () => {
    assert.deepEqual(store.listAgents({ pageSize: 10 }), { agents: [], nextPageToken: '' });
  });

  it('refuses tokens it did not issue', () => {
    seed(3);
    for (const pageToken of ['garbage!', Buffer.from('[1]').toString('base64url'), 'A'.repeat(5000)]) {
      assert.throws(() => store.listAgents({ pageToken }), isKind('invalid_page_token'), pageToken);
    }
  });

  it('continues after the key even when that agent was undeployed meanwhile', () => {
    const all = seed(10).sort(byKey);
    const first = store.listAgents({ pageSize: 4 });
    const lastShown = first.agents.at(-1) as AgentRecord;
    store.deleteAgent(lastShown.agentId);
    const rest = store.listAgents({ pageSize: 100, pageToken: first.nextPageToken });
    assert.deepEqual(rest.agents, all.slice(4));
    assert.equal(first.nextPageToken, encodePageToken(lastShown));
  });

  it('walks every agent for restore while the caller writes', () => {
    const expected = seed(1_200).sort(byKey);
    const seen: string[] = [];
    for (const agent of store.allAgents()) {
      seen.push(agent.agentId);
      store.updateAgent(agent.agentId, { desiredState: 'running', updatedAt: agent.updatedAt + 1 });
    }
    assert.deepEqual(seen, expected.map((a) => a.agentId));
  });
});
