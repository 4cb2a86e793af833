import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createSeededRandom, pickRandom, shuffle } from '../../src/cluster/seeded-random.js';

describe('seeded random', () => {
  it('replays the same sequence from the same seed, another from another', () => {
    const draw = (seed: number) => Array.from({ length: 5 }, () => createSeededRandom(seed)).map((r, i) => Array.from({ length: i + 1 }, () => r.next()).at(-1));
    assert.deepEqual(draw(42), draw(42));
    assert.notDeepEqual(draw(42), draw(43));
  });

  it('stays in [0, 1) and spreads evenly', () => {
    const random = createSeededRandom(1);
    const buckets = new Array<number>(10).fill(0);
    for (let i = 0; i < 100_000; i++) {
      const x = random.next();
      assert.ok(x >= 0 && x < 1);
      buckets[Math.floor(x * 10)]! += 1;
    }
    for (const count of buckets) assert.ok(count > 9_500 && count < 10_500, `bucket of ${count}`);
  });

  it('shuffles in place, keeping every item', () => {
    const items = Array.from({ length: 50 }, (_, i) => i);
    const shuffled = shuffle(createSeededRandom(3), [...items]);
    assert.notDeepEqual(shuffled, items);
    assert.deepEqual([...shuffled].sort((a, b) => a - b), items);
  });

  for (const size of [5, 200]) {
    it(`picks distinct accepted items from ${size}`, () => {
      const items = Array.from({ length: size }, (_, i) => i);
      const random = createSeededRandom(9);
      for (let round = 0; round < 50; round++) {
        const picked = pickRandom(random, items, 3, (x) => x % 2 === 0);
        assert.equal(new Set(picked).size, picked.length);
        assert.ok(picked.every((x) => x % 2 === 0));
        assert.equal(picked.length, Math.min(3, Math.ceil(size / 2)));
      }
      assert.deepEqual(pickRandom(random, items, 3, () => false), []);
    });
  }
});
