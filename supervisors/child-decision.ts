/**
 * What a supervisor decided about a child that is down, as an event: the
 * `type` names it, so a child modelled as a state machine (an agent) can take
 * the decision as it comes (`ChildSpec.onDecision`). Every decision is also a
 * `ChildTransition` (`restarting`, `failed`, `stopped`).
 */
export type ChildDecision =
  /** It starts again after `delayMs`; `attempt` is the n-th restart within the intensity period (unset for a sibling). */
  | { readonly type: 'restart'; readonly reason: string; readonly attempt?: number; readonly delayMs: number }
  /** It restarted too often: it stays down (`failed`), and only `restartChild` brings it back. */
  | { readonly type: 'give_up'; readonly reason: string }
  /** It stays down (`stopped`): a stop ended, a start failed, or its restart type asks for no restart. */
  | { readonly type: 'stop'; readonly reason: string };
