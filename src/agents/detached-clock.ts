/**
 * A clock whose timers fire outside any trace. The active trace context
 * follows every async chain, timers included, so a timer armed while a call
 * or an execution was active would fire in that trace: an agent's idle
 * timer, armed when a deploy's first start finished, would make the
 * hibernation five minutes later part of the deploy's trace.
 */
import { context, ROOT_CONTEXT } from '@opentelemetry/api';
import type { Clock } from '../../supervisors/index.js';

export function detachedClock(clock: Clock): Clock {
  return {
    now: () => clock.now(),
    setTimeout: (callback, delayMs) => clock.setTimeout(() => context.with(ROOT_CONTEXT, callback), delayMs),
    clearTimeout: (handle) => clock.clearTimeout(handle),
  };
}
