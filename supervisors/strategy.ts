/**
 * A restart strategy decides which children restart together when one must
 * restart. Each policy is its own file (strategy-*.ts) implementing this
 * interface; strategy-registry.ts maps names to them, and a new policy plugs
 * in with `registerStrategy` without touching the supervisor.
 */

export interface RestartStrategy {
  /** The name given in supervisor options, e.g. `one_for_one`. */
  readonly name: string;
  /**
   * The children that restart because `failedId` restarts, `failedId`
   * included, in start order. `ids` yields every child in start order; it is
   * a function so that `one_for_one` never walks the children, which keeps a
   * crash O(1) under a supervisor of thousands of agents.
   */
  select(failedId: string, ids: () => Iterable<string>): Iterable<string>;
}
