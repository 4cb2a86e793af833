/**
 * `changeModule` (migration 4): an agent's current and previous module
 * versions on a real SQLite file, module blobs kept while either version
 * references them and collected after.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { isStoreError } from '../../src/store/store-error.js';
import { createStore } from '../../src/store/store.js';
import type { Store } from '../../src/store/types.js';
import { moduleBytes, newAgent, tempDataDir, type TempDir } from './store-fixtures.js';

let dir: TempDir;
let store: Store;
const open = (): Store => createStore({ dataDir: dir.path, synchronous: 'normal' });
const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

beforeEach(() => {
  dir = tempDataDir();
  store = open();
});
afterEach(() => {
  store.close();
  dir.remove();
});

describe('store: module versions', () => {
  it('an update makes the new module version 2 and keeps version 1 as the previous, across a reopen', () => {
    const v1 = moduleBytes(1);
    const v2 = moduleBytes(2, 2048);
    const agent = store.putAgentWithModule(newAgent(1), v1);
    const updated = store.changeModule(agent.agentId, {
      module: { sha256: sha256(v2), version: 2, bytes: v2 },
      previousModule: { sha256: agent.moduleSha256, version: 1 },
      capabilities: ['counting'],
      resources: { memoryLimit: 131_072, cpuShares: 2048 },
      updatedAt: 5_000,
    });
    assert.equal(updated.moduleSha256, sha256(v2));
    assert.equal(updated.moduleSize, 2048);
    assert.equal(updated.moduleVersion, 2);
    assert.deepEqual(updated.previousModule, { sha256: sha256(v1), version: 1, size: v1.byteLength });
    assert.deepEqual(updated.capabilities, ['counting']);
    assert.deepEqual(updated.resources, { memoryLimit: 131_072, cpuShares: 2048 });
    assert.equal(updated.updatedAt, 5_000);
    store.close();
    store = open();
    assert.deepEqual(store.getAgent(agent.agentId), updated);
    assert.deepEqual(new Uint8Array(store.getModule(sha256(v1)) ?? []), v1, 'the previous module stays stored');
  });

  it('a rollback swaps the versions; a third update collects the module no version references', () => {
    const [v1, v2, v3] = [moduleBytes(1), moduleBytes(2), moduleBytes(3)];
    const agent = store.putAgentWithModule(newAgent(1), v1);
    store.changeModule(agent.agentId, { module: { sha256: sha256(v2), version: 2, bytes: v2 }, previousModule: { sha256: sha256(v1), version: 1 }, updatedAt: 2 });
    const rolledBack = store.changeModule(agent.agentId, { module: { sha256: sha256(v1), version: 1 }, previousModule: { sha256: sha256(v2), version: 2 }, updatedAt: 3 });
    assert.equal(rolledBack.moduleVersion, 1);
    assert.deepEqual(rolledBack.previousModule, { sha256: sha256(v2), version: 2, size: v2.byteLength });
    store.changeModule(agent.agentId, { module: { sha256: sha256(v3), version: 2, bytes: v3 }, previousModule: { sha256: sha256(v1), version: 1 }, updatedAt: 4 });
    assert.equal(store.getModule(sha256(v2)), undefined, 'v2 is referenced by no version any more');
    assert.ok(store.getModule(sha256(v1)) !== undefined);
  });

  it('a change without a module keeps the versions; an unknown agent is not_found and nothing is stored', () => {
    const agent = store.putAgentWithModule(newAgent(1), moduleBytes(1));
    const changed = store.changeModule(agent.agentId, { capabilities: ['a', 'b'], updatedAt: 9 });
    assert.equal(changed.moduleVersion, 1);
    assert.equal(changed.previousModule, null);
    assert.deepEqual(changed.capabilities, ['a', 'b']);
    const orphan = moduleBytes(7);
    assert.throws(
      () => store.changeModule('agent-missing', { module: { sha256: sha256(orphan), version: 2, bytes: orphan }, updatedAt: 1 }),
      (err) => isStoreError(err, 'not_found'),
    );
    assert.equal(store.getModule(sha256(orphan)), undefined);
  });

  it('an undeploy collects both versions when no other agent uses them', () => {
    const [v1, v2] = [moduleBytes(1), moduleBytes(2)];
    const agent = store.putAgentWithModule(newAgent(1), v1);
    store.changeModule(agent.agentId, { module: { sha256: sha256(v2), version: 2, bytes: v2 }, previousModule: { sha256: sha256(v1), version: 1 }, updatedAt: 2 });
    const other = store.putAgentWithModule(newAgent(2), v2);
    assert.deepEqual(store.deleteAgent(agent.agentId), { moduleSha256: sha256(v2), moduleCollected: false, previousCollected: sha256(v1) });
    assert.equal(store.getModule(sha256(v1)), undefined);
    assert.deepEqual(store.deleteAgent(other.agentId), { moduleSha256: sha256(v2), moduleCollected: true });
  });
});
