/** Supervisor options, their defaults, and the checks that turn a typo into a precise error at creation. */
import { resolveBackoff, type BackoffOptions } from './backoff.js';
import { createRealClock, type Clock } from './clock.js';
import { resolveChildSpec, type ChildSpec, type ResolvedChildSpec } from './child-spec.js';
import { resolveIntensity, type Intensity } from './intensity.js';
import { mathRandom, type Random } from './random.js';
import type { RestartStrategy } from './strategy.js';
import { getStrategy } from './strategy-registry.js';

/**
 * Who gives up when a child restarts more than `maxRestarts` times within
 * `periodMs`:
 * - `supervisor` (OTP): the count covers all children together; past it the
 *   supervisor stops every child and exits abnormally, and its own
 *   supervisor decides what next (escalation).
 * - `child`: each child has its own count; past it that child alone goes to
 *   `failed` and stays listed, not restarted, while the supervisor and its
 *   other children carry on. For the agent supervisor, where one broken
 *   agent must not take its thousands of siblings down.
 */
export type IntensityScope = 'supervisor' | 'child';

/**
 * How children are stopped when the supervisor stops: `ordered`, one at a
 * time in reverse start order (OTP; services that depend on earlier ones);
 * `concurrent`, all at once (agents, which depend on none of each other and
 * each get their own shutdown timeout).
 */
export type ShutdownOrder = 'ordered' | 'concurrent';

export interface SupervisorOptions {
  /** Names the supervisor in events and errors; its child id when nested. */
  readonly id: string;
  /** A registered name (the built-ins: `BuiltinStrategyName`) or a strategy; default `one_for_one`. */
  readonly strategy?: string | RestartStrategy;
  /** Default `DEFAULT_MAX_RESTARTS` (intensity.ts). */
  readonly maxRestarts?: number;
  /** Default `DEFAULT_PERIOD_MS` (intensity.ts). */
  readonly periodMs?: number;
  /** Default `supervisor`, as in OTP. */
  readonly intensityScope?: IntensityScope;
  /** Any field left out takes the constant of backoff.ts. */
  readonly backoff?: Partial<BackoffOptions>;
  /** Default `ordered`. */
  readonly shutdownOrder?: ShutdownOrder;
  /** Static children, started in this order by `start()`. */
  readonly children?: readonly ChildSpec[];
  /** Default: the process clock. */
  readonly clock?: Clock;
  /** Default: `Math.random`. */
  readonly random?: Random;
}

export interface ResolvedSupervisorOptions {
  readonly id: string;
  readonly strategy: RestartStrategy;
  readonly intensity: Intensity;
  readonly intensityScope: IntensityScope;
  readonly backoff: BackoffOptions;
  readonly shutdownOrder: ShutdownOrder;
  readonly children: readonly ResolvedChildSpec[];
  readonly clock: Clock;
  readonly random: Random;
}

export function resolveSupervisorOptions(options: SupervisorOptions): ResolvedSupervisorOptions {
  if (typeof options.id !== 'string' || options.id === '') throw new TypeError('supervisor: id must be a non-empty string');
  const where = `supervisor "${options.id}"`;
  const intensityScope = options.intensityScope ?? 'supervisor';
  if (intensityScope !== 'supervisor' && intensityScope !== 'child') throw new RangeError(`${where}: intensityScope must be supervisor or child`);
  const shutdownOrder = options.shutdownOrder ?? 'ordered';
  if (shutdownOrder !== 'ordered' && shutdownOrder !== 'concurrent') throw new RangeError(`${where}: shutdownOrder must be ordered or concurrent`);
  const children = (options.children ?? []).map(resolveChildSpec);
  const ids = new Set<string>();
  for (const child of children) {
    if (ids.has(child.id)) throw new RangeError(`${where}: two children have the id "${child.id}"`);
    ids.add(child.id);
  }
  const strategy = options.strategy ?? 'one_for_one';
  return {
    id: options.id,
    strategy: typeof strategy === 'string' ? getStrategy(strategy) : strategy,
    intensity: resolveIntensity({
      ...(options.maxRestarts === undefined ? {} : { maxRestarts: options.maxRestarts }),
      ...(options.periodMs === undefined ? {} : { periodMs: options.periodMs }),
    }),
    intensityScope,
    backoff: resolveBackoff(options.backoff),
    shutdownOrder,
    children,
    clock: options.clock ?? createRealClock(),
    random: options.random ?? mathRandom,
  };
}
