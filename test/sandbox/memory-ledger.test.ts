import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createMemoryLedger } from '../../src/sandbox/memory-ledger.js';

const PAGE = 65_536;

test('set keeps the committed total; fits counts granted headroom as taken', () => {
  const ledger = createMemoryLedger(10 * PAGE, 4);
  const a = { memoryBytes: 0 };
  const b = { memoryBytes: 0 };
  ledger.set(a, 3 * PAGE);
  ledger.set(b, 2 * PAGE);
  ledger.set(a, 4 * PAGE);
  assert.equal(ledger.committedBytes(), 6 * PAGE);
  assert.ok(ledger.fits(4 * PAGE));
  assert.ok(!ledger.fits(5 * PAGE));
  assert.equal(ledger.grant(100), 1, 'a quarter of the 4 free pages');
  assert.ok(!ledger.fits(4 * PAGE));
  ledger.release(1);
  ledger.set(b, 0);
  assert.equal(ledger.committedBytes(), 4 * PAGE);
});

test('grants: at most what is wanted, at most an even share among the places still free', () => {
  const cases: Array<{ limitPages: number; places: number; wanted: number[]; grants: number[] }> = [
    { limitPages: 100, places: 4, wanted: [1000, 1000, 1000, 1000], grants: [25, 25, 25, 25] },
    { limitPages: 100, places: 4, wanted: [10, 1000, 1000], grants: [10, 30, 30] },
    { limitPages: 100, places: 2, wanted: [0, 1000], grants: [0, 100] },
    { limitPages: 3, places: 4, wanted: [5, 5, 5, 5], grants: [0, 1, 1, 1] },
    { limitPages: 0, places: 2, wanted: [5], grants: [0] },
  ];
  for (const { limitPages, places, wanted, grants } of cases) {
    const ledger = createMemoryLedger(limitPages * PAGE, places);
    assert.deepEqual(wanted.map((w) => ledger.grant(w)), grants, JSON.stringify({ limitPages, places, wanted }));
    assert.ok(ledger.grantedPages() <= limitPages);
  }
});

test('grants and commitments never exceed the limit together', () => {
  const ledger = createMemoryLedger(64 * PAGE, 4);
  const account = { memoryBytes: 0 };
  ledger.set(account, 40 * PAGE);
  const grants = [ledger.grant(64), ledger.grant(64), ledger.grant(64), ledger.grant(64)];
  assert.ok(ledger.committedBytes() / PAGE + grants.reduce((a, b) => a + b, 0) <= 64, `${grants}`);
  for (const g of grants) ledger.release(g);
  assert.equal(ledger.grantedPages(), 0);
  assert.equal(ledger.grant(64), 6, 'a quarter of the 24 free pages again');
});
