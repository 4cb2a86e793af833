import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { createReadyQueue } from '../../src/agents/ready-queue.js';

describe('ready queue', () => {
  it('pops the lowest virtual time first; equal times in the order they came', () => {
    const queue = createReadyQueue<{ name: string; vtime: number }>();
    for (const [name, vtime] of [['a', 5], ['b', 1], ['c', 5], ['d', 0], ['e', 1]] as const) queue.push({ name, vtime });
    const order: string[] = [];
    for (let item = queue.pop(); item !== undefined; item = queue.pop()) order.push(item.name);
    assert.deepEqual(order, ['d', 'b', 'e', 'a', 'c']);
    assert.equal(queue.length, 0);
  });

  it('orders like a stable sort, for any pushes', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 20 }), { maxLength: 300 }), (times) => {
        const queue = createReadyQueue<{ i: number; vtime: number }>();
        times.forEach((vtime, i) => queue.push({ i, vtime }));
        const popped: number[] = [];
        for (let item = queue.pop(); item !== undefined; item = queue.pop()) popped.push(item.i);
        const expected = times.map((vtime, i) => ({ vtime, i })).sort((a, b) => a.vtime - b.vtime || a.i - b.i).map((x) => x.i);
        assert.deepEqual(popped, expected);
      }),
    );
  });

  it('keeps the virtual time an item had when queued', () => {
    const queue = createReadyQueue<{ vtime: number }>();
    const late = { vtime: 1 };
    queue.push(late);
    queue.push({ vtime: 2 });
    late.vtime = 10;
    assert.equal(queue.pop(), late);
    assert.equal(queue.pop()?.vtime, 2);
    assert.equal(queue.pop(), undefined);
  });
});
