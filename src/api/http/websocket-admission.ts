/**
 * The security steps for a WebSocket upgrade, run in the order of the Koa
 * list before the connection is upgraded (DESIGN.md section 9: streams are
 * checked when they open). A refusal is the same HTTP error answer as any
 * other request's; a stream once open is not checked again.
 */
import type { IncomingMessage } from 'node:http';
import type { Security } from '../../security/security.js';
import { operationOfRoute, securedCallOf } from './http-security.js';
import type { HttpRoute } from './routes.js';

/** The principal the stream runs as, for `client:<principal>`. */
export type WebSocketAdmission = (req: IncomingMessage, route: HttpRoute, traceId: string) => Promise<string | undefined>;

export function websocketAdmission(security: Security): WebSocketAdmission {
  const { gate } = security;
  const steps = [gate.block, gate.authenticate, gate.rateLimit, gate.lockdown, gate.authorize];
  return async (req, route, traceId) => {
    const operation = operationOfRoute(route, true);
    if (operation === undefined) return undefined;
    const call = securedCallOf(req, operation, traceId, security.apiKeyHeader);
    for (const step of steps) await step(call);
    return call.principal?.id;
  };
}
