import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createIdGenerator, idTime } from '../../src/bus/message-id.js';

const ULID = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;

test('ids are ULIDs carrying their millisecond', () => {
  const now = Date.UTC(2025, 5, 1, 12);
  const id = createIdGenerator({ now: () => now })();
  assert.match(id, ULID);
  assert.equal(idTime(id), now);
  assert.match(createIdGenerator()(), ULID);
});

test('ids from one generator strictly increase, within one millisecond and when the clock steps back', () => {
  const times = [1000, 1000, 1000, 999, 1001, 1001];
  let i = 0;
  const next = createIdGenerator({ now: () => times[i++] ?? 2000 });
  const ids = times.map(() => next());
  for (let k = 1; k < ids.length; k++) assert.ok((ids[k] ?? '') > (ids[k - 1] ?? ''), `${ids[k]} > ${ids[k - 1]}`);
  assert.equal(idTime(ids[3] ?? ''), 1000, 'a clock step back keeps the last time');
});

test('the random part is incremented, with carry, inside one millisecond', () => {
  const next = createIdGenerator({ now: () => 0, random: (bytes) => bytes.fill(31) });
  const first = next();
  assert.equal(first, '0000000000' + 'Z'.repeat(16));
  // All ones cannot be incremented: the generator borrows the next millisecond to stay ordered.
  const second = next();
  assert.ok(second > first);
  assert.equal(idTime(second), 1);
});

test('injected random bytes fix the id; the pool is refilled as it runs out', () => {
  let fills = 0;
  let t = 0;
  const next = createIdGenerator({ now: () => t++, random: (bytes) => { fills++; bytes.fill(0); } });
  for (let k = 0; k < 1000; k++) assert.equal(next().slice(10), '0'.repeat(16));
  assert.equal(fills, 4, '256 ids per refill');
});

test('idTime rejects what is not a ULID', () => {
  for (const text of ['', 'short', 'I'.repeat(26), 'Z'.repeat(26)]) assert.equal(idTime(text), undefined, text);
});

test('a million ids are unique', () => {
  const next = createIdGenerator();
  const seen = new Set<string>();
  for (let k = 0; k < 1_000_000; k++) seen.add(next());
  assert.equal(seen.size, 1_000_000);
});
