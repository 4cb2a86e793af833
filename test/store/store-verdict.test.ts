/**
 * The start-time verdict on the store (issue 41, item 4): the data
 * directory's record against what the database holds, one row per case.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { IdentityReading } from '../../src/store/data-dir-identity.js';
import { judgeStore, refusalMessage, type StoreFacts, type StoreFile } from '../../src/store/store-verdict.js';

const recorded = (deploys: number, undeploys: number, nodeId = 'node-a'): IdentityReading => ({
  state: 'present',
  identity: { nodeId, acknowledgedDeploys: deploys, acknowledgedUndeploys: undeploys },
});
const holds = (facts: Partial<StoreFacts>): StoreFile => ({
  state: 'present',
  facts: { nodeId: 'node-a', acknowledgedDeploys: 0, acknowledgedUndeploys: 0, agents: 0, ...facts },
});

const cases: Array<[string, IdentityReading, StoreFile, 'accept' | RegExp]> = [
  ['a new data directory', { state: 'absent' }, { state: 'missing' }, 'accept'],
  ['a store from before the record existed', { state: 'absent' }, holds({ acknowledgedDeploys: 219, agents: 219 }), 'accept'],
  ['the same counts', recorded(40, 2), holds({ acknowledgedDeploys: 40, acknowledgedUndeploys: 2, agents: 38 }), 'accept'],
  ['one deploy more: committed, killed before the record', recorded(40, 2), holds({ acknowledgedDeploys: 41, acknowledgedUndeploys: 2, agents: 39 }), 'accept'],
  ['a missing store of a directory whose agents were all undeployed', recorded(5, 5), { state: 'missing' }, 'accept'],
  ['a missing store of a directory that had agents', recorded(219, 0), { state: 'missing' }, /^svc\.db is missing, but this data directory recorded 219 agents \(219 deploys and 0 undeploys acknowledged\) on node node-a$/],
  ['an empty store of a directory that had agents', recorded(219, 0), { state: 'empty' }, /^svc\.db is empty \(0 bytes\), but .* 219 agents/],
  ['fewer deploys: a damaged write-ahead log', recorded(40, 0), holds({ acknowledgedDeploys: 19, agents: 19 }), /holds 19 agents after 19 deploys .* 21 deploys acknowledged earlier are missing/],
  ['fewer undeploys: an undeployed agent would come back', recorded(10, 3), holds({ acknowledgedDeploys: 10, acknowledgedUndeploys: 2, agents: 8 }), /1 undeploys acknowledged earlier are missing/],
  ['a new database where agents were', recorded(3, 0), holds({ nodeId: undefined }), /holds 0 agents after 0 deploys .* 3 deploys acknowledged earlier are missing/],
  ["another node's store", recorded(3, 0), holds({ nodeId: 'node-b', acknowledgedDeploys: 3, agents: 3 }), /^svc\.db belongs to node node-b, but this data directory recorded 3 agents/],
  ['an unreadable record', { state: 'unreadable', problem: 'Unexpected end of JSON input' }, holds({}), /^svc\.identity could not be read \(Unexpected end of JSON input\)$/],
];

describe('store verdict', () => {
  for (const [name, reading, file, expected] of cases) {
    it(name, () => {
      const verdict = judgeStore(reading, file);
      if (expected === 'accept') assert.equal(verdict.kind, 'accept', JSON.stringify(verdict));
      else {
        assert.equal(verdict.kind, 'refuse');
        assert.match(verdict.kind === 'refuse' ? verdict.finding : '', expected);
      }
    });
  }

  it('the refusal says what to do: restore, or accept with svc start --recover', () => {
    const message = refusalMessage('svc.db is missing');
    assert.match(message, /^svc\.db is missing\. The server refuses to start/);
    assert.match(message, /restore svc\.db .* from a backup/);
    assert.match(message, /`svc start --recover`/);
  });
});
