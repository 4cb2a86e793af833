/**
 * What a restart does to the children, as a pure function of the strategy
 * and the children's states, so it can be checked with tables.
 *
 * Following OTP: siblings selected by the strategy are stopped in reverse
 * start order, then everything selected starts again in start order;
 * temporary siblings are stopped but never restarted. Unlike OTP, a sibling
 * that is already stopped (terminated by an operator, ended normally) or
 * failed stays so: a group restart revives what was alive, not what someone
 * chose to stop.
 */
import type { RestartStrategy } from './strategy.js';
import type { RestartType } from './child-spec.js';
import type { ChildState } from './events.js';

export interface PlannedChild {
  readonly state: ChildState | null;
  readonly spec: { readonly restart: RestartType };
}

export interface RestartPlan {
  /** Siblings running or starting, to stop first, in reverse start order. */
  readonly stop: readonly string[];
  /** Children to start once the backoff has passed, in start order, the failed child included. */
  readonly start: readonly string[];
}

export function planRestart(
  strategy: RestartStrategy,
  failedId: string,
  ids: () => Iterable<string>,
  lookup: (id: string) => PlannedChild | undefined,
): RestartPlan {
  const stop: string[] = [];
  const start: string[] = [];
  for (const id of strategy.select(failedId, ids)) {
    if (id === failedId) {
      start.push(id);
      continue;
    }
    const child = lookup(id);
    if (!child) continue;
    const alive = child.state === 'running' || child.state === 'starting';
    if (alive) stop.push(id);
    // A sibling already waiting in an earlier group restart joins this one.
    if ((alive || child.state === 'restarting') && child.spec.restart !== 'temporary') start.push(id);
  }
  stop.reverse();
  return { stop, start };
}
