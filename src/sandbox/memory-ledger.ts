/**
 * The executor pool's account of linear memory against `wasm_memory_limit`.
 * Two kinds of entries: what instances hold (as last reported by their
 * worker) and growth grants. A grant reserves pages for one batch in flight:
 * the worker sets each execution's `__svc_memory_budget` from what is left of
 * it, so memory can only grow into reserved headroom and the sum of all
 * memories never passes the limit, with no shared state between threads.
 */
import { WASM_PAGE_BYTES } from './worker-protocol.js';

export interface MemoryAccount {
  memoryBytes: number;
}

export interface MemoryLedger {
  readonly limitBytes: number;
  /** Bytes held by instances (reservations for instantiation included). */
  committedBytes(): number;
  /** Pages reserved by the grants of batches in flight. */
  grantedPages(): number;
  /** Whether `bytes` more can be committed now without eating into granted headroom. */
  fits(bytes: number): boolean;
  /** Sets what one instance holds. */
  set(account: MemoryAccount, bytes: number): void;
  /**
   * Reserves growth for one batch: at most `wantedPages` (what its agents
   * could grow by in all), and at most an even share of the ungranted
   * headroom among the batch places still free, so one worker cannot starve
   * the others.
   */
  grant(wantedPages: number): number;
  /** Returns a batch's grant when it is done or its worker is gone. */
  release(pages: number): void;
}

/** `batchPlaces`: how many batches can be in flight at once (workers × batches per worker). */
export function createMemoryLedger(limitBytes: number, batchPlaces: number): MemoryLedger {
  let committed = 0;
  let granted = 0;
  let grants = 0;

  return {
    limitBytes,
    committedBytes: () => committed,
    grantedPages: () => granted,
    fits: (bytes) => committed + bytes + granted * WASM_PAGE_BYTES <= limitBytes,
    set(account, bytes) {
      committed += bytes - account.memoryBytes;
      account.memoryBytes = bytes;
    },
    grant(wantedPages) {
      const freePages = Math.floor((limitBytes - committed) / WASM_PAGE_BYTES) - granted;
      const share = Math.floor(freePages / Math.max(1, batchPlaces - grants));
      const pages = Math.max(0, Math.min(wantedPages, share));
      granted += pages;
      grants += 1;
      return pages;
    },
    release(pages) {
      granted -= pages;
      grants -= 1;
    },
  };
}
