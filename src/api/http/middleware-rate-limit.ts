/** Rate limits per source and per API key, after authentication so a key's own limit applies. */
import type { Middleware } from 'koa';
import type { Gate } from '../../security/gate.js';
import type { GatewayState } from './gateway-state.js';
import { stepMiddleware } from './middleware-step.js';

export function rateLimitMiddleware(gate: Gate): Middleware<GatewayState> {
  return stepMiddleware(gate.rateLimit);
}
