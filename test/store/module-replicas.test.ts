import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { createStore } from '../../src/store/store.js';
import type { Store } from '../../src/store/types.js';
import { newAgent, moduleBytes, tempDataDir, type TempDir } from './store-fixtures.js';

let dir: TempDir;
let store: Store;

beforeEach(() => {
  dir = tempDataDir();
  store = createStore({ dataDir: dir.path, synchronous: 'normal' });
});
afterEach(() => {
  store.close();
  dir.remove();
});

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

describe('store: modules held as replicas for other nodes', () => {
  it('keeps a replica without any agent, and forgets the module once dropped', () => {
    const bytes = moduleBytes(7);
    assert.equal(store.putReplica(bytes, 1_000), sha256(bytes));
    assert.equal(store.hasModule(sha256(bytes)), true);
    assert.deepEqual(store.getModule(sha256(bytes)), Buffer.from(bytes));
    assert.deepEqual(store.replicas(), [sha256(bytes)]);
    store.dropReplica(sha256(bytes));
    assert.equal(store.hasModule(sha256(bytes)), false);
    assert.deepEqual(store.replicas(), []);
  });

  it('an undeploy does not collect a module still held as a replica, and dropping the replica keeps an agent\'s module', () => {
    const bytes = moduleBytes(8);
    store.putAgentWithModule(newAgent(1), bytes);
    store.putReplica(bytes, 1_000);
    assert.equal(store.deleteAgent(newAgent(1).agentId).moduleCollected, false);
    assert.equal(store.hasModule(sha256(bytes)), true);
    store.putAgentWithModule(newAgent(2), bytes);
    store.dropReplica(sha256(bytes));
    assert.equal(store.hasModule(sha256(bytes)), true, 'agent 2 still references it');
    assert.equal(store.deleteAgent(newAgent(2).agentId).moduleCollected, true);
  });

  it('storing the same replica twice is one row; dropping an unknown one changes nothing', () => {
    const bytes = moduleBytes(9);
    store.putReplica(bytes, 1);
    store.putReplica(bytes, 2);
    assert.deepEqual(store.replicas(), [sha256(bytes)]);
    store.dropReplica('0'.repeat(64));
    assert.deepEqual(store.replicas(), [sha256(bytes)]);
  });
});
