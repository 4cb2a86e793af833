/** The source's block (failed-authentication blocking), first of the security steps. */
import type { Middleware } from 'koa';
import type { Gate } from '../../security/gate.js';
import type { GatewayState } from './gateway-state.js';
import { stepMiddleware } from './middleware-step.js';

export function sourceBlockMiddleware(gate: Gate): Middleware<GatewayState> {
  return stepMiddleware(gate.block);
}
