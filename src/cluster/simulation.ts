/**
 * A simulated cluster, for tests and the benchmark: memberships on the
 * in-memory network, one simulated clock, one seeded random source, so a run
 * replays exactly from its seed. Each node runs on a stallable clock of its
 * own, so a simulation can freeze one.
 */
import { createSimulatedClock, type SimulatedClock } from '../../supervisors/clock-simulated.js';
import type { Random } from '../../supervisors/random.js';
import { CONFIG_SCHEMA } from '../config/schema.js';
import { SWIM_KEYS, type SwimSettings } from './cluster-settings.js';
import type { MemberState } from './member.js';
import type { MemberChange } from './member-table.js';
import { createMembership, type Membership } from './membership.js';
import type { MembershipDelegate } from './membership-delegate.js';
import { createMemoryNetwork, type MemoryNetwork } from './memory-network.js';
import { createSeededRandom } from './seeded-random.js';
import { createStallableClock, type StallableClock } from './stallable-clock.js';

/** The configured defaults: what a simulation shows is what operators get. */
export const DEFAULT_SWIM = Object.fromEntries(SWIM_KEYS.map((key) => [key, CONFIG_SCHEMA.cluster[key].default])) as SwimSettings;

export interface SimNode {
  readonly id: string;
  readonly address: string;
  readonly clock: StallableClock;
  readonly membership: Membership;
}

/** A change as one node saw it. */
export interface ObservedChange extends MemberChange {
  readonly observer: string;
  readonly at: number;
}

export interface SimCluster {
  readonly settings: SwimSettings;
  readonly clock: SimulatedClock;
  readonly network: MemoryNetwork;
  readonly random: Random;
  readonly nodes: Map<string, SimNode>;
  readonly changes: ObservedChange[];
  /** Starts node `id` (a fresh membership at incarnation 0) and joins it through `seeds`. */
  start(id: string, seeds?: readonly string[], delegate?: MembershipDelegate): Promise<SimNode>;
  /** Stops a node without a word to the others, as a SIGKILL would. */
  crash(id: string): Promise<void>;
  run(ms: number): Promise<void>;
  /** Advances in steps until `done()` or `maxMs` passed; the simulated time it took, or undefined. */
  until(done: () => boolean, maxMs: number, stepMs?: number): Promise<number | undefined>;
  /** `node_id → state` in `observer`'s view. */
  view(observer: string): Map<string, MemberState>;
  /** True when every running node sees every id in `ids` in `state`. */
  allSee(ids: readonly string[], state: MemberState): boolean;
  stopAll(): Promise<void>;
}

/** Granularity of promise callbacks in the simulation: well under any delay the protocol waits for. */
const SETTLE_EVERY_MS = 1;

export const simAddress = (id: string) => `${id}.sim:7946`;

export interface SimClusterOptions {
  readonly seed: number;
  readonly settings?: Partial<SwimSettings>;
  readonly secretKey?: Uint8Array;
}

export function createSimCluster(options: SimClusterOptions): SimCluster {
  const clock = createSimulatedClock(0);
  const random = createSeededRandom(options.seed);
  const network = createMemoryNetwork({ clock, random });
  const settings = { ...DEFAULT_SWIM, ...options.settings };
  const nodes = new Map<string, SimNode>();
  const changes: ObservedChange[] = [];

  // Timers fire synchronously, each at its due time; promise callbacks (stream exchanges) run at the end of each
  // millisecond that fired one. Milliseconds without a timer are skipped: nothing could happen in them.
  async function run(ms: number): Promise<void> {
    const end = clock.now() + ms;
    while (clock.now() < end) {
      const next = clock.nextDue() ?? end;
      clock.set(Math.min(end, Math.max(clock.now() + SETTLE_EVERY_MS, next)));
      await clock.settle();
    }
  }

  const cluster: SimCluster = {
    settings,
    clock,
    network,
    random,
    nodes,
    changes,
    async start(id, seeds = [], delegate) {
      if (nodes.has(id)) throw new Error(`${id} is running`);
      const nodeClock = createStallableClock(clock);
      const transport = network.attach(simAddress(id), { clock: nodeClock });
      const membership = createMembership({
        nodeId: id,
        transport,
        settings,
        clock: nodeClock,
        random,
        loopDelay: nodeClock.loopDelay,
        grpcAddress: `${id}.sim:50051`,
        httpAddress: `${id}.sim:8080`,
        ...(options.secretKey ? { secretKey: options.secretKey } : {}),
        ...(delegate ? { delegate } : {}),
      });
      membership.onChange((change) => changes.push({ ...change, observer: id, at: clock.now() }));
      membership.start();
      const node = { id, address: transport.address, clock: nodeClock, membership };
      nodes.set(id, node);
      if (seeds.length > 0) void membership.join(seeds);
      return node;
    },
    async crash(id) {
      const node = nodes.get(id);
      if (!node) throw new Error(`${id} is not running`);
      nodes.delete(id);
      await node.membership.stop();
    },
    run,
    async until(done, maxMs, stepMs = 100) {
      const start = clock.now();
      while (!done()) {
        if (clock.now() - start >= maxMs) return undefined;
        await run(stepMs);
      }
      return clock.now() - start;
    },
    view(observer) {
      const node = nodes.get(observer);
      if (!node) throw new Error(`${observer} is not running`);
      return new Map(node.membership.members().map((m) => [m.node_id, m.state]));
    },
    allSee(ids, state) {
      for (const node of nodes.values()) {
        if (!ids.every((id) => node.membership.member(id)?.state === state)) return false;
      }
      return true;
    },
    async stopAll() {
      for (const id of [...nodes.keys()]) await cluster.crash(id);
    },
  };
  return cluster;
}

/** Deaths of nodes that were running, as any running node saw them: the false positives. */
export function falseDeaths(cluster: SimCluster, crashed: ReadonlySet<string> = new Set()): ObservedChange[] {
  return cluster.changes.filter((c) => c.to === 'dead' && !crashed.has(c.node_id));
}
