import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
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

/** Records how each waiting reservation settled, in order. */
function settlements(): { log: string[]; settled(name: string): (reserved: boolean) => void } {
  const log: string[] = [];
  return { log, settled: (name) => (reserved) => log.push(`${name}:${reserved ? 'reserved' : 'refused'}`) };
}

test('reserve: at once beside the grants, waiting when it fits only once they settle, refused when it cannot fit', () => {
  const cases: Array<{ committedPages: number; grantedPages: number; waitingPages: number; pages: number; expected: string }> = [
    { committedPages: 10, grantedPages: 0, waitingPages: 0, pages: 90, expected: 'reserved' },
    { committedPages: 10, grantedPages: 40, waitingPages: 0, pages: 50, expected: 'reserved' },
    { committedPages: 10, grantedPages: 40, waitingPages: 0, pages: 51, expected: 'waiting' },
    { committedPages: 10, grantedPages: 40, waitingPages: 0, pages: 90, expected: 'waiting' },
    { committedPages: 10, grantedPages: 40, waitingPages: 0, pages: 91, expected: 'refused' },
    { committedPages: 10, grantedPages: 80, waitingPages: 30, pages: 50, expected: 'waiting' },
    { committedPages: 10, grantedPages: 80, waitingPages: 30, pages: 61, expected: 'refused' },
  ];
  for (const c of cases) {
    const ledger = createMemoryLedger(100 * PAGE, 1);
    ledger.set({ memoryBytes: 0 }, c.committedPages * PAGE);
    assert.equal(ledger.grant(c.grantedPages), c.grantedPages);
    if (c.waitingPages > 0) assert.equal(ledger.reserve(c.waitingPages * PAGE, () => undefined), 'waiting');
    assert.equal(ledger.reserve(c.pages * PAGE, () => undefined), c.expected, JSON.stringify(c));
  }
});

test('regression (10,000 deploys, ~2,000 refused): instantiation waits for grants in flight instead of being refused', () => {
  // Four batches in flight hold all the free headroom between them, as they did while agents were deployed under load.
  const ledger = createMemoryLedger(1000 * PAGE, 4);
  const running = { memoryBytes: 0 };
  ledger.set(running, 100 * PAGE);
  const grants = [ledger.grant(10_000), ledger.grant(10_000), ledger.grant(10_000), ledger.grant(10_000)];
  assert.equal(ledger.committedBytes() / PAGE + ledger.grantedPages(), 1000, `${grants}`);
  const { log, settled } = settlements();
  assert.equal(ledger.reserve(PAGE, settled('a')), 'waiting');
  assert.equal(ledger.reserve(PAGE, settled('b')), 'waiting');
  assert.equal(ledger.waitingBytes(), 2 * PAGE);
  ledger.set(running, 99 * PAGE);
  assert.deepEqual(log, ['a:reserved'], 'one page freed: room for one, the grants still hold the rest');
  ledger.release(grants[0]!);
  assert.deepEqual(log, ['a:reserved', 'b:reserved'], 'the headroom the first batch gave back');
  assert.equal(ledger.committedBytes(), 101 * PAGE);
  assert.equal(ledger.waitingBytes(), 0);
});

test('grants made while a reservation waits leave its bytes alone', () => {
  const ledger = createMemoryLedger(100 * PAGE, 2);
  const first = ledger.grant(1000);
  assert.equal(first, 50);
  const { log, settled } = settlements();
  assert.equal(ledger.reserve(60 * PAGE, settled('big')), 'waiting');
  assert.equal(ledger.grant(1000), 0, 'the 50 ungranted pages are promised to the waiting reservation');
  ledger.release(first);
  assert.deepEqual(log, ['big:reserved']);
  ledger.release(0);
  assert.equal(ledger.grant(1000), 20, 'what is left after the reservation, shared by two places');
});

test('a waiting reservation is refused when growth took the room; waiters settle in order', () => {
  const ledger = createMemoryLedger(100 * PAGE, 1);
  const grown = { memoryBytes: 0 };
  ledger.set(grown, 10 * PAGE);
  const grant = ledger.grant(90);
  const { log, settled } = settlements();
  assert.equal(ledger.reserve(50 * PAGE, settled('first')), 'waiting');
  assert.equal(ledger.reserve(5 * PAGE, settled('second')), 'waiting', 'behind the first, even though it is small');
  ledger.set(grown, 60 * PAGE);
  assert.deepEqual(log, [], 'memory grew: nothing to admit yet');
  ledger.release(grant);
  assert.deepEqual(log, ['first:refused', 'second:reserved']);
  assert.equal(ledger.committedBytes(), 65 * PAGE);
  ledger.set(grown, 0);
  assert.equal(ledger.committedBytes(), 5 * PAGE);
});

test('reduce gives back part of a grant still in flight and admits what now fits', () => {
  const ledger = createMemoryLedger(10 * PAGE, 1);
  const grant = ledger.grant(10);
  const { log, settled } = settlements();
  assert.equal(ledger.reserve(3 * PAGE, settled('a')), 'waiting');
  ledger.reduce(grant - 7);
  assert.deepEqual(log, ['a:reserved']);
  assert.equal(ledger.grantedPages(), 7);
  ledger.release(7);
  assert.equal(ledger.grantedPages(), 0);
});

test('property: memory and unused grants never pass the limit; a reservation is refused only when it cannot fit', () => {
  type Op =
    | { kind: 'reserve'; pages: number }
    | { kind: 'grant'; wanted: number }
    | { kind: 'grow'; grant: number; pages: number }
    | { kind: 'finish'; grant: number }
    | { kind: 'free'; instance: number };
  const op: fc.Arbitrary<Op> = fc.oneof(
    fc.record({ kind: fc.constant('reserve' as const), pages: fc.integer({ min: 0, max: 40 }) }),
    fc.record({ kind: fc.constant('grant' as const), wanted: fc.integer({ min: 0, max: 60 }) }),
    fc.record({ kind: fc.constant('grow' as const), grant: fc.nat(), pages: fc.integer({ min: 0, max: 20 }) }),
    fc.record({ kind: fc.constant('finish' as const), grant: fc.nat() }),
    fc.record({ kind: fc.constant('free' as const), instance: fc.nat() }),
  );
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 120 }), fc.integer({ min: 1, max: 4 }), fc.array(op, { maxLength: 60 }), (limitPages, places, ops) => {
      const ledger = createMemoryLedger(limitPages * PAGE, places);
      const instances: Array<{ memoryBytes: number }> = [];
      // Grants in flight, each with what its batch has not grown into yet.
      const inFlight: Array<{ pages: number; unused: number; owner: { memoryBytes: number } }> = [];
      const admit = (pages: number) => (reserved: boolean) => {
        if (reserved) instances.push({ memoryBytes: pages * PAGE });
      };
      for (const o of ops) {
        if (o.kind === 'reserve') {
          const room = limitPages * PAGE - ledger.committedBytes() - ledger.waitingBytes();
          const outcome = ledger.reserve(o.pages * PAGE, admit(o.pages));
          if (outcome === 'reserved') instances.push({ memoryBytes: o.pages * PAGE });
          assert.equal(outcome === 'refused', o.pages * PAGE > room);
        } else if (o.kind === 'grant' && inFlight.length < places) {
          const pages = ledger.grant(o.wanted);
          const owner = { memoryBytes: 0 };
          instances.push(owner);
          inFlight.push({ pages, unused: pages, owner });
        } else if (o.kind === 'grow' && inFlight.length > 0) {
          // A worker grows an instance of the batch within what is left of its grant.
          const batch = inFlight[o.grant % inFlight.length]!;
          const pages = Math.min(o.pages, batch.unused);
          batch.unused -= pages;
          ledger.set(batch.owner, batch.owner.memoryBytes + pages * PAGE);
        } else if (o.kind === 'finish' && inFlight.length > 0) {
          const [batch] = inFlight.splice(o.grant % inFlight.length, 1);
          ledger.release(batch!.pages);
        } else if (o.kind === 'free' && instances.length > 0) {
          ledger.set(instances[o.instance % instances.length]!, 0);
        }
        const unused = inFlight.reduce((sum, b) => sum + b.unused, 0);
        assert.ok(ledger.committedBytes() + unused * PAGE <= limitPages * PAGE, 'memory plus unused grants within the limit');
        assert.equal(ledger.committedBytes(), instances.reduce((sum, i) => sum + i.memoryBytes, 0));
      }
      for (const batch of inFlight.splice(0)) ledger.release(batch.pages);
      assert.equal(ledger.waitingBytes(), 0, 'nothing waits once every grant is back');
    }),
    { numRuns: 500 },
  );
});
