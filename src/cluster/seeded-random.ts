/**
 * A seeded random source (the `Random` seam of supervisors/random.ts), so a
 * simulation replays the same probe orders, gossip targets and packet losses
 * from the same seed; and the few draws the protocol makes from one.
 */
import type { Random } from '../../supervisors/random.js';

/** mulberry32: 32 bits of state, well spread, enough to pick peers and drop packets. */
export function createSeededRandom(seed: number): Random {
  let state = seed >>> 0;
  return {
    next() {
      state = (state + 0x6d2b79f5) >>> 0;
      let t = state;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
    },
  };
}

export function randomInt(random: Random, below: number): number {
  return Math.min(below - 1, Math.floor(random.next() * below));
}

/** Fisher–Yates, in place. */
export function shuffle<T>(random: Random, items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = randomInt(random, i + 1);
    [items[i], items[j]] = [items[j] as T, items[i] as T];
  }
  return items;
}

/**
 * Up to `k` distinct items that pass `accept`, in random order. Small picks
 * from large tables draw indices at random (at most 3n draws, as memberlist's
 * `kRandomNodes`) instead of copying the table.
 */
export function pickRandom<T>(random: Random, items: readonly T[], k: number, accept: (item: T) => boolean = () => true): T[] {
  const n = items.length;
  if (n < k * 3) return shuffle(random, items.filter(accept)).slice(0, k);
  const picked: T[] = [];
  for (let draws = 0; draws < 3 * n && picked.length < k; draws++) {
    const item = items[randomInt(random, n)] as T;
    if (accept(item) && !picked.includes(item)) picked.push(item);
  }
  return picked;
}
