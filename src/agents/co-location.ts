/**
 * Placement of agents that talk together: worker-local delivery
 * (agent-lender.ts) helps only agents hosted by the same executor worker, and
 * placement spreads agents over the workers as they are deployed. When the
 * main thread routes a message between two agents that last sent to each
 * other and live on different shared workers, one of them moves to the
 * other's worker (agent-relocate.ts): the one on the worker hosting more
 * instances, the sender on a tie, so the workers' counts never drift more
 * than two apart and no worker is starved. Bounded: `MAX_MOVING` moves at
 * once, and an agent moves at most once per `MOVE_PAUSE_MS`, so two agents
 * that change partners do not chase each other from worker to worker.
 */
import type { Clock } from '../../supervisors/index.js';
import type { ExecutorPool } from '../sandbox/types.js';
import type { AgentRuntime } from './agent-runtime.js';

export const MAX_MOVING = 4;
export const MOVE_PAUSE_MS = 30_000;

export interface CoLocation {
  /** `sender` just sent `receiver` a message, through the main thread. */
  talked(sender: AgentRuntime, receiver: AgentRuntime): void;
  /** Moves asked for so far. */
  readonly moves: number;
}

export function createCoLocation(pool: ExecutorPool, clock: Clock): CoLocation {
  const moving = new Set<AgentRuntime>();
  const movedAt = new WeakMap<AgentRuntime, number>();
  let moves = 0;

  function move(agent: AgentRuntime, workerId: number): void {
    const now = clock.now();
    const last = movedAt.get(agent);
    if (moving.has(agent) || (last !== undefined && now - last < MOVE_PAUSE_MS)) return;
    moving.add(agent);
    movedAt.set(agent, now);
    moves += 1;
    agent.moveTo(workerId, () => moving.delete(agent));
  }

  return {
    talked(sender, receiver) {
      if (moving.size >= MAX_MOVING || sender.lastPeer !== receiver.id || receiver.lastPeer !== sender.id) return;
      if (sender.instance === undefined || receiver.instance === undefined) return;
      const from = pool.placementOf(sender.instance);
      const to = pool.placementOf(receiver.instance);
      if (from === undefined || to === undefined || !from.shared || !to.shared || from.workerId === to.workerId) return;
      if (to.instances > from.instances) move(receiver, from.workerId);
      else move(sender, to.workerId);
    },
    get moves() {
      return moves;
    },
  };
}
