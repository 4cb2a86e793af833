/** Authorization against the one permission table: PERMISSION_DENIED, metadata `permission`. */
import type { Middleware } from 'koa';
import type { Gate } from '../../security/gate.js';
import type { GatewayState } from './gateway-state.js';
import { stepMiddleware } from './middleware-step.js';

export function authorizeMiddleware(gate: Gate): Middleware<GatewayState> {
  return stepMiddleware(gate.authorize);
}
