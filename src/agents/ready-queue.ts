/**
 * Agents waiting for an execution slot, lowest virtual time first: the order
 * of weighted fair queueing (see dispatcher.ts). A binary heap; ties go to
 * the agent that became ready first, so equal agents take turns.
 */

export interface Schedulable {
  /** Fuel burned so far divided by the agent's shares. */
  vtime: number;
}

interface Entry<T> {
  readonly item: T;
  readonly vtime: number;
  readonly seq: number;
}

export interface ReadyQueue<T extends Schedulable> {
  readonly length: number;
  /** Queues `item` at its current `vtime`. */
  push(item: T): void;
  /** The item with the lowest virtual time, removed. */
  pop(): T | undefined;
}

export function createReadyQueue<T extends Schedulable>(): ReadyQueue<T> {
  const heap: Entry<T>[] = [];
  let seq = 0;

  const before = (a: Entry<T>, b: Entry<T>) => a.vtime < b.vtime || (a.vtime === b.vtime && a.seq < b.seq);

  function up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i]!, heap[parent]!)) return;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  }

  function down(i: number): void {
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let least = i;
      if (left < heap.length && before(heap[left]!, heap[least]!)) least = left;
      if (right < heap.length && before(heap[right]!, heap[least]!)) least = right;
      if (least === i) return;
      [heap[i], heap[least]] = [heap[least]!, heap[i]!];
      i = least;
    }
  }

  return {
    get length() {
      return heap.length;
    },
    push(item) {
      heap.push({ item, vtime: item.vtime, seq: seq++ });
      up(heap.length - 1);
    },
    pop() {
      const top = heap[0];
      if (top === undefined) return undefined;
      const last = heap.pop()!;
      if (heap.length > 0) {
        heap[0] = last;
        down(0);
      }
      return top.item;
    },
  };
}
