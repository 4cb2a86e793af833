import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createAwareness, nextHealthScore, scaleByHealth } from '../../src/cluster/awareness.js';

describe('awareness (local health)', () => {
  const steps: Array<[number, number, number, number]> = [
    // score, delta, max multiplier, next
    [0, 1, 8, 1],
    [0, -1, 8, 0],
    [6, 3, 8, 7],
    [7, 1, 8, 7],
    [3, -5, 8, 0],
    [0, 2, 1, 0],
  ];
  for (const [score, delta, max, next] of steps) {
    it(`score ${score} ${delta >= 0 ? '+' : ''}${delta} (max ×${max}) → ${next}`, () => assert.equal(nextHealthScore(score, delta, max), next));
  }

  it('scales timeouts by score + 1', () => {
    assert.equal(scaleByHealth(500, 0), 500);
    assert.equal(scaleByHealth(500, 7), 4000);
  });

  it('keeps its score between applications', () => {
    const awareness = createAwareness(4);
    awareness.apply(2);
    awareness.apply(5);
    assert.equal(awareness.score, 3);
    assert.equal(awareness.scale(100), 400);
    awareness.apply(-1);
    assert.equal(awareness.score, 2);
  });
});
