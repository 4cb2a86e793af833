/**
 * Gossip waiting to be piggybacked (memberlist's TransmitLimitedQueue): each
 * item is sent at most retransmit_mult × ceil(log10(n + 1)) times, the least
 * sent first and, among those, the newest. An item queued under a key
 * replaces the one before it under that key (a newer message about a member
 * makes the older one moot).
 */
import { retransmitLimit } from './formulas.js';

export interface BroadcastQueueOptions {
  readonly retransmitMult: number;
  /** Members counted in the retransmit limit, read at each take. */
  readonly memberCount: () => number;
}

export interface BroadcastQueue {
  /** `onDone` runs once the item has been sent its last time, or was replaced or cleared. */
  push(key: string | undefined, bytes: Uint8Array, onDone?: () => void): void;
  /**
   * Items that fit in `budget` bytes, counting `overhead` bytes each beside
   * their length; each taken item counts one transmission.
   */
  take(budget: number, overhead: number): Uint8Array[];
  readonly size: number;
  clear(): void;
}

interface Item {
  readonly key: string | undefined;
  readonly bytes: Uint8Array;
  readonly id: number;
  transmits: number;
  readonly onDone: (() => void) | undefined;
}

const order = (a: Item, b: Item) => a.transmits - b.transmits || b.id - a.id;

export function createBroadcastQueue(options: BroadcastQueueOptions): BroadcastQueue {
  let items: Item[] = [];
  const byKey = new Map<string, Item>();
  let nextId = 1;

  function remove(item: Item): void {
    items = items.filter((other) => other !== item);
    if (item.key !== undefined && byKey.get(item.key) === item) byKey.delete(item.key);
    item.onDone?.();
  }

  return {
    push(key, bytes, onDone) {
      if (key !== undefined) {
        const old = byKey.get(key);
        if (old) remove(old);
      }
      const item: Item = { key, bytes, id: nextId++, transmits: 0, onDone };
      items.push(item);
      if (key !== undefined) byKey.set(key, item);
    },
    take(budget, overhead) {
      if (items.length === 0) return [];
      const limit = retransmitLimit(options.retransmitMult, options.memberCount());
      items.sort(order);
      const out: Uint8Array[] = [];
      const finished: Item[] = [];
      let used = 0;
      for (const item of items) {
        const cost = item.bytes.length + overhead;
        if (used + cost > budget) continue;
        used += cost;
        out.push(item.bytes);
        item.transmits += 1;
        if (item.transmits >= limit) finished.push(item);
        if (budget - used <= overhead) break;
      }
      for (const item of finished) remove(item);
      return out;
    },
    get size() {
      return items.length;
    },
    clear() {
      const all = items;
      items = [];
      byKey.clear();
      for (const item of all) item.onDone?.();
    },
  };
}
