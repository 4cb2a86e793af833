/**
 * One instance in the executor pool: what the pool keeps about it on the main
 * thread. Callers only ever see it as an `InstanceHandle` and hand it back;
 * each instantiation makes a new one, so a call for an instance that was
 * replaced (a late release after a restart) can never reach its successor.
 */
import type { GrowthAccount } from './memory-ledger.js';
import type { InstanceHandle } from './types.js';

export class PooledInstance implements InstanceHandle, GrowthAccount {
  /** Linear memory as its worker last reported it (the reservation until the first report). */
  memoryBytes: number;
  /** The ledger's counting pass that last counted it (memory-ledger.ts `wantedPages`). */
  counted = 0;
  /** Set once its instantiation succeeded. */
  ready = false;
  /** False once released, discarded after a failure, or lost with its worker. */
  live = true;

  constructor(
    readonly label: string,
    /** The number requests use for it on its worker (unique per instantiation). */
    readonly index: number,
    readonly workerId: number,
    readonly sha256: string,
    readonly limitPages: number,
    /** Pages its memory can reach: its limit, or its module's maximum when lower. */
    readonly maxPages: number,
    reservedBytes: number,
    readonly onLost: ((instance: InstanceHandle) => void) | undefined,
  ) {
    this.memoryBytes = reservedBytes;
  }
}

/** The pool's instance behind a handle; anything else is a programming error. */
export function pooled(handle: InstanceHandle): PooledInstance {
  if (!(handle instanceof PooledInstance)) throw new TypeError('not an instance handle of an executor pool');
  return handle;
}
