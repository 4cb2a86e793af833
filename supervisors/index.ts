/**
 * OTP-style supervision for svc, independent of `src/` (DESIGN.md section 1).
 * See docs/supervision.md.
 */
export { BACKOFF_JITTER, BACKOFF_MULTIPLIER, DEFAULT_BACKOFF, INITIAL_BACKOFF_MS, MAX_BACKOFF_MS, backoffDelay, baseBackoff, resolveBackoff } from './backoff.js';
export type { BackoffOptions } from './backoff.js';
export { MAX_TIMER_MS, createRealClock } from './clock.js';
export type { Clock, TimerHandle } from './clock.js';
export { createSimulatedClock } from './clock-simulated.js';
export type { SimulatedClock } from './clock-simulated.js';
export { DEFAULT_SHUTDOWN_TIMEOUT_MS, RESTART_TYPES, resolveChildSpec, shouldRestart } from './child-spec.js';
export type { ChildHandle, ChildKind, ChildSpec, ResolvedChildSpec, RestartType, StartContext, StartReason } from './child-spec.js';
export type { ChildDecision } from './child-decision.js';
export { SupervisorError } from './errors.js';
export type { SupervisorErrorCode } from './errors.js';
export { CHILD_STATES, createListenerSet } from './events.js';
export type { ChildState, ChildTransition, ListenerSet, TransitionListener } from './events.js';
export { ExitError, abnormalExit, createExitSignal, normalExit } from './exit-signal.js';
export type { ChildExit, ExitListener, ExitSignal } from './exit-signal.js';
export { DEFAULT_INTENSITY, DEFAULT_MAX_RESTARTS, DEFAULT_PERIOD_MS, exceedsIntensity, recordRestart, resolveIntensity } from './intensity.js';
export type { Intensity } from './intensity.js';
export { createFixedRandom, mathRandom } from './random.js';
export type { Random } from './random.js';
export { planRestart } from './restart-plan.js';
export type { PlannedChild, RestartPlan } from './restart-plan.js';
export type { RestartStrategy } from './strategy.js';
export { getStrategy, registerStrategy, strategyNames } from './strategy-registry.js';
export type { BuiltinStrategyName } from './strategy-registry.js';
export { createSupervisor, supervisorSpec } from './supervisor.js';
export type { ChildCounts, ChildInfo, Supervisor, SupervisorState } from './supervisor-api.js';
export type { IntensityScope, ShutdownOrder, SupervisorOptions } from './supervisor-options.js';
