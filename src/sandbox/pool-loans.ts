/**
 * Worker-local delivery in the executor pool (worker-local.ts has the
 * worker's side): as a batch leaves for a shared worker, the lender is asked
 * which instances take part. Only instances of that worker that are proven
 * (one of their executions finished within the slice, probation.ts) are
 * eligible: an unproven one runs alone on its worker. The isolated lane lends
 * nothing: runaways run there on their whole fuel, one message at a time.
 */
import type { Probation } from './probation.js';
import type { WorkerSlot } from './placement.js';
import { pooled, type PooledInstance } from './pool-instance.js';
import type { Borrower, InstanceHandle, Lender } from './types.js';
import type { Call, Loan } from './worker-batches.js';

export interface PoolLoans {
  lendWith(lender: Lender): void;
  /** The loan of a batch of `items` leaving for `slot`; undefined when nothing is lent. */
  lend(slot: WorkerSlot, items: readonly Call[]): Loan | undefined;
}

export function createPoolLoans(probation: Probation | undefined): PoolLoans {
  let lender: Lender | undefined;
  return {
    lendWith(next) {
      lender = next;
    },

    lend(slot, items) {
      if (lender === undefined || slot.lane !== 'shared') return undefined;
      const { hops, traced } = lender.terms();
      if (hops <= 0) return undefined;
      const owners: Array<[string, InstanceHandle]> = [];
      for (const call of items) if (call.op === 'execute') owners.push([call.owner.label, call.owner]);
      const eligible = (handle: InstanceHandle): boolean => {
        const owner = pooled(handle);
        return owner.live && owner.ready && slot.instances.has(owner) && (probation === undefined || probation.proven(owner));
      };
      const lent = lender.borrow(owners, eligible);
      // One agent alone has nobody to talk to inside the batch.
      if (lent.length < 2) {
        for (const [, borrower] of lent) borrower.returned();
        return undefined;
      }
      const borrowers = new Map<number, { owner: PooledInstance; borrower: Borrower }>();
      for (const [handle, borrower] of lent) {
        const owner = pooled(handle);
        borrowers.set(owner.index, { owner, borrower });
      }
      return { terms: { agents: Int32Array.from(borrowers.keys()), hops, traced }, borrowers };
    },
  };
}
