import assert from 'node:assert/strict';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { it } from 'node:test';
import { createEventLoopDelaySource } from '../../src/cluster/loop-delay.js';

it('reads a blocked event loop as delay, once', async () => {
  const source = createEventLoopDelaySource();
  try {
    source.takeMaxDelayMs();
    // The histogram starts over at a read; its first interval after one is not measured.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const start = performance.now();
    while (performance.now() - start < 300) {
      // A busy loop: the stall the histogram must see.
    }
    await new Promise((resolve) => setTimeout(resolve, 30));
    await nextTurn();
    const delay = source.takeMaxDelayMs();
    assert.ok(delay >= 250, `saw ${delay} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.ok(source.takeMaxDelayMs() < delay, 'the reading starts over');
  } finally {
    source.close();
  }
});
