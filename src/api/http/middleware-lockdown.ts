/** Lockdown: UNAVAILABLE for every operation it does not spare. */
import type { Middleware } from 'koa';
import type { Gate } from '../../security/gate.js';
import type { GatewayState } from './gateway-state.js';
import { stepMiddleware } from './middleware-step.js';

export function lockdownMiddleware(gate: Gate): Middleware<GatewayState> {
  return stepMiddleware(gate.lockdown);
}
