/**
 * What each RPC does when its REST route is called: which AgentService method
 * it translates to and the status of success. Routes come from the proto; this
 * table is the only per-RPC code of the gateway, and an RPC with an HTTP rule
 * but no entry here stops the server at start.
 */
import type { AgentService, CallContext, DeployAgentRequest, ListAgentsRequest } from '../../agents/agent-service-types.js';
import { validateFilter } from '../../bus/filter.js';
import { SvcError } from '../../errors/svc-error.js';
import type { SecuredCall } from '../../security/gate.js';
import type { SecurityService } from '../../security/security-service-types.js';
import { withDefaults, type JsonObject } from './json-codec.js';
import type { HttpRoute } from './routes.js';

export interface RpcCall {
  readonly service: AgentService;
  /** The transcoded request: snake_case, only the fields given. */
  readonly request: JsonObject;
  readonly ctx: CallContext;
  readonly route: HttpRoute;
  /** The security endpoints' service; undefined on a gateway built without security. */
  readonly security: SecurityService | undefined;
  /** The call as the security middleware saw it. */
  readonly secured: SecuredCall | undefined;
  /** What an answer may add beyond its JSON body. */
  readonly http: HttpExchange;
}

/** The HTTP parts of an answer a binding may set. */
export interface HttpExchange {
  /** The request came over TLS (a cookie is then `Secure`). */
  readonly secure: boolean;
  setCookie(name: string, value: string, maxAgeSeconds: number): void;
  /** Answers with this status and Location (the JSON body stays). */
  redirect(status: 302 | 303, location: string): void;
}

export interface RpcBinding {
  /** HTTP status of success. */
  readonly status: number;
  /**
   * Set when the answer is a list of the RPC's response type under this name
   * rather than one response: a plain GET of a streaming RPC.
   */
  readonly list?: string;
  invoke(call: RpcCall): Promise<unknown>;
}

const text = (value: unknown): string => (typeof value === 'string' ? value : '');

/** Plain GET of SubscribeMessages: the agent's recent messages (matching the types asked for); without an agent there is only the stream. */
async function recentMessages({ service, request, ctx }: RpcCall): Promise<unknown[]> {
  const filter = validateFilter(request.filter);
  if (filter.agent_id === undefined) {
    throw new SvcError('INVALID_ARGUMENT', 'this path streams messages over WebSocket: send an Upgrade request, or name an agent_id for its recent messages', {
      field: 'agent_id',
      reason: 'upgrade_required',
    });
  }
  const messages = await service.recentMessages(filter.agent_id, ctx);
  const types = filter.message_types === undefined ? undefined : new Set<string>(filter.message_types);
  return types === undefined ? messages : messages.filter((m) => types.has(m.message_type));
}

export const RPC_BINDINGS: Readonly<Record<string, RpcBinding>> = {
  DeployAgent: {
    status: 201,
    invoke: ({ service, request, ctx, route }) => service.deploy(withDefaults(route.requestType, request) as unknown as DeployAgentRequest, ctx),
  },
  // 200 with the empty UndeployAgentResponse (`{}`), as gRPC answers, rather than 204: every success has a JSON body.
  UndeployAgent: {
    status: 200,
    invoke: async ({ service, request, ctx }) => {
      await service.undeploy(text(request.agent_id), ctx);
      return {};
    },
  },
  ListAgents: { status: 200, invoke: ({ service, request, ctx }) => service.list(request as ListAgentsRequest, ctx) },
  GetAgent: { status: 200, invoke: ({ service, request, ctx }) => service.get(text(request.agent_id), ctx) },
  GetAgentLogs: {
    status: 200,
    invoke: ({ service, request, ctx }) => service.logs(text(request.agent_id), ctx, typeof request.limit === 'number' ? request.limit : undefined),
  },
  RestartAgent: { status: 200, invoke: ({ service, request, ctx }) => service.restart(text(request.agent_id), ctx) },
  UpdateAgent: { status: 200, invoke: ({ service, request, ctx }) => service.update(request, ctx) },
  SendMessage: { status: 202, invoke: ({ service, request, ctx }) => service.send(request.message ?? {}, ctx) },
  CallAgent: {
    status: 200,
    invoke: ({ service, request, ctx }) => service.call(request.message ?? {}, ctx, { timeout_ms: typeof request.timeout_ms === 'number' ? request.timeout_ms : 0 }),
  },
  SubscribeMessages: { status: 200, list: 'messages', invoke: recentMessages },
  // A plain GET of the follow path: the lines kept now, as GetAgentLogs answers them.
  FollowAgentLogs: { status: 200, list: 'lines', invoke: async ({ service, request, ctx }) => (await service.logs(text(request.agent_id), ctx)).lines },
  Health: {
    status: 200,
    invoke: async ({ service, ctx }) => {
      const health = await service.health(ctx);
      // The contract echoes the caller's trace id whatever the service filled in.
      return { ...health, trace_id: ctx.trace_id };
    },
  },
  Metrics: { status: 200, invoke: ({ service, ctx }) => service.metrics(ctx) },
  ListMembers: { status: 200, invoke: ({ service, ctx }) => service.members(ctx) },
};
