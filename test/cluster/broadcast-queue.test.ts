import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createBroadcastQueue } from '../../src/cluster/broadcast-queue.js';

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (items: Uint8Array[]) => items.map((b) => new TextDecoder().decode(b));

describe('broadcast queue', () => {
  it('sends each item retransmit_mult × ceil(log10(n + 1)) times, then drops it', () => {
    let members = 3;
    const queue = createBroadcastQueue({ retransmitMult: 2, memberCount: () => members });
    let done = 0;
    queue.push('a', bytes('a'), () => done++);
    assert.deepEqual(text(queue.take(100, 0)), ['a']);
    assert.deepEqual(text(queue.take(100, 0)), ['a']);
    assert.deepEqual(queue.take(100, 0), []);
    assert.equal(done, 1);
    members = 10;
    queue.push('b', bytes('b'));
    for (let i = 0; i < 4; i++) assert.deepEqual(text(queue.take(100, 0)), ['b']);
    assert.equal(queue.size, 0);
  });

  it('sends the least-sent first, and the newest among equals', () => {
    const queue = createBroadcastQueue({ retransmitMult: 10, memberCount: () => 1 });
    queue.push('old', bytes('old'));
    queue.take(100, 0);
    queue.push('x', bytes('x'));
    queue.push('y', bytes('y'));
    assert.deepEqual(text(queue.take(2, 0)), ['y', 'x'], 'the unsent, newest first');
    assert.deepEqual(text(queue.take(100, 0)), ['y', 'x', 'old'], 'all sent once: newest first');
  });

  it('fits items and their overhead into the budget, skipping those too large', () => {
    const queue = createBroadcastQueue({ retransmitMult: 10, memberCount: () => 1 });
    queue.push(undefined, bytes('small'));
    queue.push(undefined, bytes('a much longer item'));
    assert.deepEqual(text(queue.take(10, 3)), ['small']);
    assert.deepEqual(text(queue.take(7, 3)), [], 'small fits with 2 overhead only');
    assert.deepEqual(text(queue.take(100, 3)), ['a much longer item', 'small']);
  });

  it('a newer item under a key replaces the older one, whose onDone runs', () => {
    const queue = createBroadcastQueue({ retransmitMult: 10, memberCount: () => 1 });
    const finished: string[] = [];
    queue.push('node-b', bytes('suspect b'), () => finished.push('suspect b'));
    queue.push(undefined, bytes('user'), () => finished.push('user'));
    queue.push('node-b', bytes('alive b'), () => finished.push('alive b'));
    assert.deepEqual(finished, ['suspect b']);
    assert.deepEqual(text(queue.take(100, 0)).sort(), ['alive b', 'user']);
    queue.clear();
    assert.deepEqual(finished.sort(), ['alive b', 'suspect b', 'user']);
    assert.equal(queue.size, 0);
  });
});
