/**
 * The /api/v1 routes on @koa/router: one per google.api.http binding, each
 * transcoding the HTTP request, calling its RPC binding and writing the
 * response in the proto's JSON form.
 */
import Router from '@koa/router';
import type { ParameterizedContext } from 'koa';
import type { AgentService } from '../../agents/agent-service-types.js';
import type { SecurityService } from '../../security/security-service-types.js';
import { describeRequest, describeResponse } from '../api-call.js';
import { callContext, type GatewayState } from './gateway-state.js';
import { encodeMessage } from './json-codec.js';
import { RPC_BINDINGS, type HttpExchange, type RpcBinding } from './rpc-bindings.js';
import { SECURITY_RPC_BINDINGS } from './rpc-bindings-security.js';
import type { HttpRoute } from './routes.js';
import { transcode } from './transcode.js';

/** Every RPC's binding: the agents' and the security endpoints'. */
export const ALL_BINDINGS: Readonly<Record<string, RpcBinding>> = { ...RPC_BINDINGS, ...SECURITY_RPC_BINDINGS };

/** Throws at start for a route whose RPC has no binding, so a new RPC cannot ship half-wired. */
export function bindingFor(route: HttpRoute, bindings: Readonly<Record<string, RpcBinding>> = ALL_BINDINGS): RpcBinding {
  const binding = Object.hasOwn(bindings, route.rpc) ? bindings[route.rpc] : undefined;
  if (binding === undefined) throw new Error(`RPC ${route.rpc} has an HTTP rule (${route.method} ${route.template}) but no REST binding in rpc-bindings.ts`);
  return binding;
}

/** Cookies are HttpOnly and SameSite=Strict, and Secure over TLS (DESIGN.md section 9). */
function exchangeOf(ctx: ParameterizedContext<GatewayState>): HttpExchange & { redirected?: { status: number; location: string } } {
  const exchange: HttpExchange & { redirected?: { status: number; location: string } } = {
    secure: ctx.secure,
    setCookie(name, value, maxAgeSeconds) {
      ctx.cookies.set(name, value, { httpOnly: true, secure: ctx.secure, sameSite: 'strict', path: '/', maxAge: maxAgeSeconds * 1000, overwrite: true });
    },
    redirect(status, location) {
      exchange.redirected = { status, location };
    },
  };
  return exchange;
}

export function createApiRouter(service: AgentService, routes: readonly HttpRoute[], security?: SecurityService): Router<GatewayState> {
  const router = new Router<GatewayState>();
  for (const route of routes) {
    const binding = bindingFor(route);
    router.register(route.routerPath, [route.method], async (ctx) => {
      const request = transcode(route, { params: ctx.params, query: ctx.query, body: ctx.request.body });
      const { call, operation } = ctx.state;
      describeRequest(call.span, operation, request);
      const http = exchangeOf(ctx);
      const result = await binding.invoke({ service, request, ctx: callContext(ctx.state), route, security, secured: ctx.state.secured, http });
      describeResponse(call.span, operation, result);
      ctx.status = http.redirected?.status ?? binding.status;
      if (http.redirected !== undefined) ctx.set('Location', http.redirected.location);
      ctx.body =
        binding.list === undefined
          ? encodeMessage(route.responseType, result)
          : { [binding.list]: (result as unknown[]).map((item) => encodeMessage(route.responseType, item)) };
    });
  }
  return router;
}
