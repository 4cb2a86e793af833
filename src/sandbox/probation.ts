/**
 * Probation on the shared lane (lanes.ts): an agent is *unproven* until one
 * of its executions has finished within the slice. Each shared worker runs at
 * most one unproven execution at a time; the others wait here, not in the
 * worker's batches. Twenty new spinners on two workers would otherwise put
 * ten slices in a row before a well-behaved agent's next message (measured
 * 1.6 s); with probation that agent waits for one slice at most. An agent's
 * own messages keep their order: the dispatcher gives it one at a time.
 */
import type { PooledInstance } from './pool-instance.js';
import type { ExecuteCall } from './worker-batches.js';

export interface Probation {
  /** Whether `call` goes to its worker now; false: it is held until the unproven execution there is answered. */
  admit(call: ExecuteCall): boolean;
  /** An answered execution; returns the held call to send next on that worker, if any. */
  answered(call: ExecuteCall, ok: boolean): ExecuteCall | undefined;
  /** Whether an execution of `instance` finished within the slice. */
  proven(instance: PooledInstance): boolean;
  /** Takes the calls held for worker `workerId` (it was lost, or the pool closes). */
  drain(workerId: number): ExecuteCall[];
}

export function createProbation(): Probation {
  const proven = new WeakSet<PooledInstance>();
  /** The unproven execution each worker runs, by worker id. */
  const probing = new Map<number, ExecuteCall>();
  const held = new Map<number, ExecuteCall[]>();

  return {
    admit(call) {
      if (proven.has(call.owner)) return true;
      const workerId = call.owner.workerId;
      if (!probing.has(workerId)) {
        probing.set(workerId, call);
        return true;
      }
      const queue = held.get(workerId);
      if (queue === undefined) held.set(workerId, [call]);
      else queue.push(call);
      return false;
    },
    answered(call, ok) {
      const workerId = call.owner.workerId;
      if (ok) proven.add(call.owner);
      if (probing.get(workerId) !== call) return undefined;
      probing.delete(workerId);
      const next = held.get(workerId)?.shift();
      if (next !== undefined) probing.set(workerId, next);
      return next;
    },
    proven: (instance) => proven.has(instance),

    drain(workerId) {
      probing.delete(workerId);
      const calls = held.get(workerId) ?? [];
      held.delete(workerId);
      return calls;
    },
  };
}
