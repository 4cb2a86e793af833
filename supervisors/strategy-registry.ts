/** Restart strategies by name, the three of OTP built in. */
import type { RestartStrategy } from './strategy.js';
import { oneForAll } from './strategy-one-for-all.js';
import { oneForOne } from './strategy-one-for-one.js';
import { restForOne } from './strategy-rest-for-one.js';

export type BuiltinStrategyName = 'one_for_one' | 'one_for_all' | 'rest_for_one';

const strategies = new Map<string, RestartStrategy>([oneForOne, oneForAll, restForOne].map((strategy) => [strategy.name, strategy]));

/** Adds a strategy; a name already taken is refused so a built-in cannot be replaced by accident. */
export function registerStrategy(strategy: RestartStrategy): void {
  if (strategies.has(strategy.name)) throw new Error(`restart strategy "${strategy.name}" is already registered`);
  strategies.set(strategy.name, strategy);
}

export function getStrategy(name: string): RestartStrategy {
  const strategy = strategies.get(name);
  if (!strategy) throw new RangeError(`unknown restart strategy "${name}"; known: ${strategyNames().join(', ')}`);
  return strategy;
}

export function strategyNames(): string[] {
  return [...strategies.keys()];
}
