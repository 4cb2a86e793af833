/**
 * What a supervisor decided about a child that is down, as an event: the
 * `type` names it, so a child modelled as a state machine (an agent) can take
 * the decision as it comes (`ChildSpec.onDecision`). Every decision is also a
 * `ChildTransition` (`restarting`, `failed`, `stopped`).
 */
import type { ChildState } from './events.js';

export type ChildDecision =
  /** It starts again after `delayMs`; `attempt` is the n-th restart within the intensity period (unset for a sibling). */
  | { readonly type: 'restart'; readonly reason: string; readonly attempt?: number; readonly delayMs: number }
  /** It restarted too often: it stays down (`failed`), and only `restartChild` brings it back. */
  | { readonly type: 'give_up'; readonly reason: string }
  /** It stays down (`stopped`): a stop ended, a start failed, or its restart type asks for no restart. */
  | { readonly type: 'stop'; readonly reason: string };

/** The decision a transition to `to` stands for: `restarting`, `failed` and `stopped` are decisions, the others not. */
export function decisionFor(to: ChildState, reason: string, attempt?: number, delayMs?: number): ChildDecision | undefined {
  switch (to) {
    case 'restarting':
      return { type: 'restart', reason, ...(attempt === undefined ? {} : { attempt }), delayMs: delayMs ?? 0 };
    case 'failed':
      return { type: 'give_up', reason };
    case 'stopped':
      return { type: 'stop', reason };
    default:
      return undefined;
  }
}
