/**
 * The Koa application of the HTTP listener. Its request pipeline is the list
 * below, in order, one concern per file. The security steps follow DESIGN.md
 * section 9's order; a gateway built without security (a test of the doors
 * alone) leaves them out and serves everyone as `anonymous`.
 */
import Koa, { type Middleware } from 'koa';
import type { Clock } from '../../../supervisors/index.js';
import type { AgentService } from '../../agents/agent-service-types.js';
import type { Security } from '../../security/security.js';
import type { DoorTelemetry } from '../api-call.js';
import { createApiRouter } from './api-router.js';
import { dashboardAllowed, dashboardMiddleware } from './dashboard-routes.js';
import { createDocsRouter, docsAllowed } from './docs-routes.js';
import type { GatewayState } from './gateway-state.js';
import { auditMiddleware } from './middleware-audit.js';
import { authenticateMiddleware } from './middleware-authenticate.js';
import { authorizeMiddleware } from './middleware-authorize.js';
import { deadlineMiddleware } from './middleware-deadline.js';
import { errorMiddleware } from './middleware-errors.js';
import { jsonBodyMiddleware } from './middleware-json-body.js';
import { lockdownMiddleware } from './middleware-lockdown.js';
import { noRouteMiddleware } from './middleware-no-route.js';
import { rateLimitMiddleware } from './middleware-rate-limit.js';
import { requestTargetMiddleware } from './middleware-request-target.js';
import { securedCallMiddleware } from './middleware-secured-call.js';
import { sourceBlockMiddleware } from './middleware-source-block.js';
import { telemetryMiddleware } from './middleware-telemetry.js';
import { PROBE_PATHS, probesMiddleware, type Readiness } from './probes.js';
import { allowedMethods, findRoute, type HttpRoute } from './routes.js';

/** Methods that may carry a body; the others skip the route lookup of body parsing. */
const BODY_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH']);

export interface GatewayAppOptions {
  routes: readonly HttpRoute[];
  openApiDocument: unknown;
  requestTimeoutMs: number;
  bodyLimitBytes: number;
  readiness(): Readiness;
  telemetry: DoorTelemetry;
  /** Runs the request deadline. */
  clock: Clock;
  security?: Security;
}

export function createGatewayApp(service: AgentService, options: GatewayAppOptions): Koa<GatewayState> {
  const { routes, telemetry, security } = options;
  const { log } = telemetry;
  const api = createApiRouter(service, routes, security?.service);
  const docs = createDocsRouter(options.openApiDocument);
  const allowed = (path: string): string[] => [...allowedMethods(routes, path), ...docsAllowed(path), ...dashboardAllowed(path), ...(PROBE_PATHS.includes(path) ? ['GET'] : [])];

  const pipeline: Array<Middleware<GatewayState>> = [
    telemetryMiddleware(telemetry, routes), // first: the span, trace id, metrics and access line cover every later step
    errorMiddleware(log), // whatever is thrown below becomes an Error body with the table's status
    requestTargetMiddleware(), // before anything reads ctx.path, which throws for a target Node's URL parser rejects
    probesMiddleware(options.readiness), // /health and /ready: outside /api/v1, cheap, never behind auth
    ...(security === undefined
      ? []
      : [
          securedCallMiddleware(security, routes), // the operation and what the request presents
          sourceBlockMiddleware(security.gate), // before authentication: a blocked source's credential is not even looked at
          authenticateMiddleware(security.gate),
          rateLimitMiddleware(security.gate), // after authentication: keyed by the principal, and a key's own limit
          lockdownMiddleware(security.gate),
          authorizeMiddleware(security.gate),
        ]),
    deadlineMiddleware(options.requestTimeoutMs, options.clock),
    jsonBodyMiddleware({ limitBytes: options.bodyLimitBytes, expectsBody: (method, path) => BODY_METHODS.has(method) && findRoute(routes, method, path)?.route.body !== undefined }),
    ...(security === undefined ? [] : [auditMiddleware(security.gate)]), // last before the routes: the outcome of what passed the gate
    api.routes() as Middleware<GatewayState>,
    docs.routes() as Middleware<GatewayState>, // after the API: API calls never pay for its matching
    dashboardMiddleware(), // the web dashboard at / and /dashboard: static files, open; its API calls pass the steps above
    noRouteMiddleware(allowed), // last: reached only when no route answered
  ];

  const app = new Koa<GatewayState>();
  for (const middleware of pipeline) app.use(middleware);
  // Errors reach here only after headers went out (a docs file failing mid-stream); Koa would print them to stderr.
  app.on('error', (err: unknown) => log?.warn({ err }, 'response failed after headers were sent'));
  return app;
}
