/**
 * Runaway isolation: the executor pool's workers form two lanes. Every agent
 * starts on the shared lane, whose workers run each execution on a slice of
 * fuel (`execution_slice`, tens of milliseconds) instead of the whole
 * `fuel_per_execution`. An agent that uses up its slice or its fuel, or
 * overruns a timeout, is marked a runaway and from its next instantiation
 * (its restart) on lives on the isolated lane, whose workers give it its
 * whole fuel. So a spinning agent holds a shared worker once, for one slice,
 * and the agents that behave keep the shared workers to themselves. The
 * isolated lane's threads start with the first runaway: most servers never
 * need them.
 */
import { leastLoaded, type Lane, type WorkerSlot } from './placement.js';

/** Runaways remembered; past it the oldest is forgotten (its agent may be long gone: ids are never reused). */
export const MAX_REMEMBERED_RUNAWAYS = 10_000;

export interface LanesOptions {
  shared: number;
  /** Workers of the isolated lane; 0 keeps runaways on the shared lane. */
  isolated: number;
  createSlot(id: number, lane: Lane): WorkerSlot;
}

export interface Lanes {
  /** Every worker place, indexed by its id: the shared lane's first. */
  readonly slots: WorkerSlot[];
  /**
   * Where an instance of `label` goes: shared worker `near` when asked and it works (and `label` is no runaway),
   * else the least loaded of its lane (or the shared one); undefined when none works.
   */
  pick(label: string, near?: number): WorkerSlot | undefined;
  markRunaway(label: string): void;
  isRunaway(label: string): boolean;
  /** Runaways remembered. */
  runaways(): number;
}

export function createLanes(options: LanesOptions): Lanes {
  const slots = Array.from({ length: options.shared }, (_, id) => options.createSlot(id, 'shared'));
  const shared = slots.slice();
  const isolated: WorkerSlot[] = [];
  // A Set keeps insertion order, which makes forgetting the oldest O(1).
  const runaways = new Set<string>();

  function isolatedLane(): WorkerSlot[] {
    while (isolated.length < options.isolated) {
      const slot = options.createSlot(slots.length, 'isolated');
      slots.push(slot);
      isolated.push(slot);
    }
    return isolated;
  }

  return {
    slots,
    pick(label, near) {
      const asked = near === undefined ? undefined : slots[near];
      if (asked !== undefined && !asked.broken && asked.lane === 'shared' && !runaways.has(label)) return asked;
      if (options.isolated > 0 && runaways.has(label)) return leastLoaded(isolatedLane()) ?? leastLoaded(shared);
      return leastLoaded(shared);
    },
    markRunaway(label) {
      if (runaways.has(label)) return;
      runaways.add(label);
      if (runaways.size > MAX_REMEMBERED_RUNAWAYS) runaways.delete(runaways.values().next().value!);
    },
    isRunaway: (label) => runaways.has(label),
    runaways: () => runaways.size,
  };
}
