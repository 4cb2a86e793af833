/**
 * A fixed-capacity FIFO on a circular array: O(1) push and shift with no
 * per-item allocation. Storage grows on demand up to the capacity, so ten
 * thousand mostly idle rings (one per agent's history) cost little.
 */
export interface RingBuffer<T> {
  readonly capacity: number;
  readonly length: number;
  /** Appends; false (and nothing stored) when full. */
  push(item: T): boolean;
  /** Appends, evicting the oldest item when full; returns the evicted item. */
  pushEvicting(item: T): T | undefined;
  /** Removes and returns the oldest item. */
  shift(): T | undefined;
  /** Oldest first; at most `limit` of the newest items when given. */
  toArray(limit?: number): T[];
  clear(): void;
}

export function createRingBuffer<T>(capacity: number): RingBuffer<T> {
  if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`ring capacity must be a positive integer, got ${capacity}`);
  return new Ring<T>(capacity);
}

class Ring<T> implements RingBuffer<T> {
  private items: (T | undefined)[] = [];
  private head = 0;
  private count = 0;

  constructor(readonly capacity: number) {}

  get length(): number {
    return this.count;
  }

  push(item: T): boolean {
    if (this.count === this.capacity) return false;
    this.put(item);
    return true;
  }

  pushEvicting(item: T): T | undefined {
    if (this.count < this.capacity) {
      this.put(item);
      return undefined;
    }
    const evicted = this.items[this.head];
    this.items[this.head] = item;
    this.head = (this.head + 1) % this.capacity;
    return evicted;
  }

  shift(): T | undefined {
    if (this.count === 0) return undefined;
    const item = this.items[this.head];
    // Clear the slot so a consumed item is not kept alive by the ring.
    this.items[this.head] = undefined;
    this.head = (this.head + 1) % this.capacity;
    this.count--;
    return item;
  }

  toArray(limit = this.count): T[] {
    const n = Math.max(0, Math.min(limit, this.count));
    const out = new Array<T>(n);
    const start = this.head + this.count - n;
    for (let i = 0; i < n; i++) out[i] = this.items[(start + i) % this.capacity] as T;
    return out;
  }

  clear(): void {
    this.items = [];
    this.head = 0;
    this.count = 0;
  }

  private put(item: T): void {
    // Slots are written in order from 0, so the next slot is either in the array or just past its end.
    const slot = (this.head + this.count) % this.capacity;
    if (slot === this.items.length) this.items.push(item);
    else this.items[slot] = item;
    this.count++;
  }
}
