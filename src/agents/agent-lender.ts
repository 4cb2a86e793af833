/**
 * Worker-local delivery, the agents' side (sandbox/worker-local.ts has the
 * worker's): which agents a batch may borrow. The main thread keeps its
 * authority over every message by deciding this up front. A batch borrows
 * the agents of its items and the agents they last sent to, following that
 * chain, as long as each agent:
 * - is running on an instance of the batch's worker, and neither starting,
 *   stopping, updating, restarting by request, nor on probation after an update;
 * - is idle (or handles the batch's item) with an empty mailbox, out of the
 *   backlog, under its CPU quota: a message it takes inside the batch is the
 *   next it would have taken anyway;
 * - holds `message:send` and `message:receive`, and the server is under no
 *   memory pressure (`mayLend`): a send inside the batch is one the checks
 *   would have let through.
 * A borrowed agent takes no other work until the batch is back: the messages
 * that reach it meanwhile wait in its mailbox, and a stop, an update or a
 * hibernation waits as for a message in flight (agent-runtime.ts).
 */
import type { Clock } from '../../supervisors/index.js';
import type { Borrower, ExecutionResult, InstanceHandle, Lender } from '../sandbox/types.js';
import type { AgentRuntime } from './agent-runtime.js';

export interface AgentLenderOptions {
  /** `runtime.local_delivery_hops`. */
  hops: number;
  /** Whether traces are recorded: then only messages of unsampled traces stay in a worker. */
  traced(): boolean;
  clock: Clock;
  agentOf(id: string): AgentRuntime | undefined;
  /** The agent's capabilities and the server's memory allow it to send and take messages without asking. */
  mayLend(agent: AgentRuntime): boolean;
  /** The dispatcher's result callback of the agent. */
  settled(agent: AgentRuntime): (result: ExecutionResult) => void;
  /** The loan is over: the agent takes its mailbox's messages again. */
  returned(agent: AgentRuntime): void;
}

export function createAgentLender(options: AgentLenderOptions): Lender {
  const { hops, clock, agentOf, mayLend } = options;
  const terms = { hops, traced: false };

  function lendable(agent: AgentRuntime, instance: InstanceHandle, inBatch: boolean, now: number): boolean {
    if (agent.lent || agent.queued || agent.throttle !== undefined || agent.mailbox.length > 0) return false;
    if (agent.state !== 'running' || agent.instance !== instance || !agent.accepting || agent.restartRequested) return false;
    if (agent.canary !== undefined || agent.upgradePlan !== undefined) return false;
    if (inBatch ? agent.inFlightOn !== instance : agent.inFlight !== undefined) return false;
    return agent.budget.readyAt(now) <= now && mayLend(agent);
  }

  function borrowerOf(agent: AgentRuntime): Borrower {
    agent.borrower ??= { onResult: options.settled(agent), returned: () => options.returned(agent) };
    return agent.borrower;
  }

  return {
    terms() {
      terms.traced = options.traced();
      return terms;
    },

    borrow(owners, eligible) {
      const lent: Array<[InstanceHandle, Borrower]> = [];
      const seen = new Set<AgentRuntime>();
      const inBatch = new Set<InstanceHandle>();
      for (const [, instance] of owners) inBatch.add(instance);
      const now = clock.now();
      // Each item's agent, then whom it last sent to, and so on: the chain a conversation takes.
      for (const [label] of owners) {
        let steps = 0;
        for (let agent = agentOf(label); agent !== undefined && !seen.has(agent) && steps++ < hops; agent = agentOf(agent.lastPeer ?? '')) {
          seen.add(agent);
          const instance = agent.instance;
          if (instance === undefined || !eligible(instance) || !lendable(agent, instance, inBatch.has(instance), now)) continue;
          agent.lent = true;
          agent.lentOn = instance;
          lent.push([instance, borrowerOf(agent)]);
        }
      }
      return lent;
    },
  };
}
