/**
 * Pending probes by sequence number: who to tell when an ack or a nack for it
 * arrives. An entry expires after its timeout, so a lost ack leaves nothing
 * behind.
 */
import type { Clock, TimerHandle } from '../../supervisors/clock.js';

export interface AckRegistry {
  nextSeq(): number;
  expect(seq: number, timeoutMs: number, handlers: { onAck(): void; onNack?(): void }): void;
  /** Runs and removes the entry's ack handler; false when none waits for `seq`. */
  ack(seq: number): boolean;
  nack(seq: number): void;
  clear(): void;
}

interface Entry {
  readonly timer: TimerHandle;
  readonly onAck: () => void;
  readonly onNack: (() => void) | undefined;
}

const SEQ_MODULUS = 2 ** 32;

export function createAckRegistry(clock: Clock): AckRegistry {
  const entries = new Map<number, Entry>();
  let seq = 0;
  return {
    nextSeq() {
      seq = (seq + 1) % SEQ_MODULUS;
      return seq;
    },
    expect(id, timeoutMs, handlers) {
      const timer = clock.setTimeout(() => entries.delete(id), timeoutMs);
      entries.set(id, { timer, onAck: handlers.onAck, onNack: handlers.onNack });
    },
    ack(id) {
      const entry = entries.get(id);
      if (!entry) return false;
      entries.delete(id);
      clock.clearTimeout(entry.timer);
      entry.onAck();
      return true;
    },
    nack(id) {
      entries.get(id)?.onNack?.();
    },
    clear() {
      for (const entry of entries.values()) clock.clearTimeout(entry.timer);
      entries.clear();
    },
  };
}
