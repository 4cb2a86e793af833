/**
 * Lockdown (DESIGN.md section 9): while on, every operation but health,
 * metrics, audit and lifting lockdown answers UNAVAILABLE, reason
 * `lockdown`. On at start with `enable_lockdown_mode`, switched at run time
 * by `PUT /api/v1/system/lockdown`; a restart returns to the setting.
 */
import { SvcError } from '../errors/svc-error.js';
import { LOCKDOWN_EXEMPT, type Operation } from './permissions.js';

export interface Lockdown {
  readonly enabled: boolean;
  set(enabled: boolean): void;
  /** Throws UNAVAILABLE (lockdown) for an operation lockdown refuses. */
  check(operation: Operation): void;
}

export function createLockdown(initial: boolean): Lockdown {
  let enabled = initial;
  return {
    get enabled() {
      return enabled;
    },
    set(value) {
      enabled = value;
    },
    check(operation) {
      if (enabled && !LOCKDOWN_EXEMPT.has(operation)) {
        throw new SvcError('UNAVAILABLE', 'the server is in lockdown', { reason: 'lockdown' });
      }
    },
  };
}
