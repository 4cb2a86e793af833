/**
 * The executor pool's account of linear memory against `wasm_memory_total`.
 * Three kinds of entries: what instances hold (as last reported by their
 * worker), growth grants, and reservations waiting for grants to settle.
 *
 * A grant reserves pages for one batch in flight: the worker sets each
 * execution's `__svc_memory_budget` from what is left of it, so memory can
 * only grow into reserved headroom and the sum of all memories never passes
 * the limit, with no shared state between threads. A grant covers at most
 * what the batch's agents could grow by, so most of the headroom stays free
 * for instantiation.
 *
 * An instantiation that fits beside the committed memory but not beside the
 * grants in flight waits for those grants to settle (a batch is answered in
 * milliseconds) instead of being refused: refusing it was the bug where
 * deploying 10,000 agents while others ran failed about 2,000 instantiations
 * with plenty of memory free. Grants made while it waits leave its bytes
 * alone, so it waits for at most the grants already made.
 */
import { WASM_PAGE_BYTES } from './worker-protocol.js';

export interface MemoryAccount {
  memoryBytes: number;
}

/** An instance as a grant sees it: how far it can still grow. */
export interface GrowthAccount extends MemoryAccount {
  readonly maxPages: number;
  /** Written by `wantedPages`, so an instance with several calls in a batch counts once. */
  counted: number;
}

/** How a reservation for a new instance went: see `MemoryLedger.reserve`. */
export type Reservation = 'reserved' | 'waiting' | 'refused';

export interface MemoryLedger {
  readonly limitBytes: number;
  /** Bytes held by instances (reservations for instantiation included). */
  committedBytes(): number;
  /** Pages reserved by the grants of batches in flight. */
  grantedPages(): number;
  /** Bytes of the reservations waiting for grants to settle. */
  waitingBytes(): number;
  /** Whether `bytes` more can be committed now without eating into granted headroom or waiting reservations. */
  fits(bytes: number): boolean;
  /**
   * Reserves `bytes` for a new instance, committed at once (`reserved`) when
   * they fit beside what is committed, granted and waiting. When they would
   * fit once the grants in flight settle, the reservation waits (`waiting`)
   * and `settled` is called later, from `release` or `set`: with true once
   * the bytes are committed, false when growth took the room meanwhile.
   * Otherwise `refused`. A committed reservation becomes an account holding
   * `bytes` (`{ memoryBytes: bytes }`).
   */
  reserve(bytes: number, settled: (reserved: boolean) => void): Reservation;
  /** Sets what one instance holds. */
  set(account: MemoryAccount, bytes: number): void;
  /** What `accounts` could still grow by in all, each up to its `maxPages`, each counted once. */
  wantedPages(accounts: Iterable<GrowthAccount>): number;
  /**
   * Reserves growth for one batch: at most `wantedPages` (what its agents
   * could grow by in all), and at most an even share of the free headroom
   * among the batch places still free, so one worker cannot starve the others.
   */
  grant(wantedPages: number): number;
  /** Gives back part of a grant whose batch is still in flight. */
  reduce(pages: number): void;
  /** Gives back the rest of a batch's grant when it is done or its worker is gone. */
  release(pages: number): void;
}

interface Waiter {
  bytes: number;
  settled(reserved: boolean): void;
}

/** `batchPlaces`: how many batches can be in flight at once (workers × batches per worker). */
export function createMemoryLedger(limitBytes: number, batchPlaces: number): MemoryLedger {
  let committed = 0;
  let granted = 0;
  let grants = 0;
  let waiting = 0;
  const waiters: Waiter[] = [];
  let admitting = false;
  let countingPass = 0;

  /** Settles the waiters in order while the first one can be decided; a settled callback may call back in. */
  function admitWaiters(): void {
    if (admitting) return;
    admitting = true;
    try {
      while (waiters.length > 0) {
        const first = waiters[0]!;
        const fits = committed + granted * WASM_PAGE_BYTES + first.bytes <= limitBytes;
        // Still possible once the grants settle: keep waiting.
        if (!fits && committed + first.bytes <= limitBytes) return;
        waiters.shift();
        waiting -= first.bytes;
        if (fits) committed += first.bytes;
        first.settled(fits);
      }
    } finally {
      admitting = false;
    }
  }

  function fits(bytes: number): boolean {
    return committed + granted * WASM_PAGE_BYTES + waiting + bytes <= limitBytes;
  }

  return {
    limitBytes,
    committedBytes: () => committed,
    grantedPages: () => granted,
    waitingBytes: () => waiting,
    fits,
    reserve(bytes, settled) {
      if (fits(bytes)) {
        committed += bytes;
        return 'reserved';
      }
      if (committed + waiting + bytes > limitBytes) return 'refused';
      waiters.push({ bytes, settled });
      waiting += bytes;
      return 'waiting';
    },
    set(account, bytes) {
      const lower = bytes < account.memoryBytes;
      committed += bytes - account.memoryBytes;
      account.memoryBytes = bytes;
      if (lower && waiters.length > 0) admitWaiters();
    },
    wantedPages(accounts) {
      countingPass += 1;
      let wanted = 0;
      for (const account of accounts) {
        if (account.counted === countingPass) continue;
        account.counted = countingPass;
        wanted += Math.max(0, account.maxPages - account.memoryBytes / WASM_PAGE_BYTES);
      }
      return wanted;
    },
    grant(wantedPages) {
      const freePages = Math.floor((limitBytes - committed - waiting) / WASM_PAGE_BYTES) - granted;
      const share = Math.floor(freePages / Math.max(1, batchPlaces - grants));
      const pages = Math.max(0, Math.min(wantedPages, share));
      granted += pages;
      grants += 1;
      return pages;
    },
    reduce(pages) {
      granted -= pages;
      if (waiters.length > 0) admitWaiters();
    },
    release(pages) {
      granted -= pages;
      grants -= 1;
      if (waiters.length > 0) admitWaiters();
    },
  };
}
