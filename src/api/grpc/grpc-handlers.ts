/**
 * The `svc.v1.ManagementService` handlers: each one translates its request,
 * calls `AgentService` and translates the answer or the failure. No business
 * logic lives here (DESIGN.md section 1).
 */
import { once } from 'node:events';
import { Metadata, type Deadline, type ServerUnaryCall, type ServerWritableStream, type UntypedServiceImplementation, type sendUnaryData } from '@grpc/grpc-js';
import type { Clock, TimerHandle } from '../../../supervisors/index.js';
import type { AgentLogLine, AgentService, CallContext } from '../../agents/agent-service-types.js';
import type { BoundedSink } from '../../bus/bounded-sink.js';
import type { BusEvent } from '../../bus/events.js';
import { SvcError } from '../../errors/svc-error.js';
import type { SecurityService } from '../../security/security-service-types.js';
import type { Logger } from '../../telemetry/logger.js';
import { callContextFrom } from './grpc-call-context.js';
import { toGrpcStatus } from './grpc-errors.js';
import { securedCallOf } from './grpc-secured-call.js';
import { SECURITY_METHODS } from './grpc-security-handlers.js';
import { rejectionOf } from './grpc-strict-decode.js';
import {
  deployRequestFrom,
  listRequestFrom,
  messageToProto,
  streamedMessage,
  type ProtoDeployAgentRequest,
  type ProtoListAgentsRequest,
} from './grpc-translate.js';

export interface HandlerOptions {
  /** `server.request_timeout`: a unary call running longer fails with DEADLINE_EXCEEDED. */
  requestTimeoutMs: number;
  /** Told of every call, so the connection limiter knows its connection sent a request. */
  onCall?: (call: { getPeer(): string }) => void;
  log?: Logger;
  /** The security endpoints' service; without it they answer UNAVAILABLE. */
  security?: SecurityService;
  /** Runs the calls' deadline timers. */
  clock: Clock;
}

export interface ManagementHandlers {
  readonly implementation: UntypedServiceImplementation;
  /** Open `SubscribeMessages` streams. */
  readonly streams: number;
  /** Ends every open stream with `error` (at shutdown: UNAVAILABLE), releasing their subscriptions. */
  endStreams(error: SvcError): void;
}

interface CallLike {
  getDeadline(): Deadline;
  getPeer(): string;
  /** The request metadata: the security interceptors keep the call's principal under it. */
  readonly metadata: Metadata;
}

export function createManagementHandlers(service: AgentService, options: HandlerOptions): ManagementHandlers {
  const { requestTimeoutMs, onCall, log, clock } = options;
  const streamsOpen = new Set<(error: SvcError) => void>();

  function contextOf(call: CallLike, timeoutMs?: number): CallContext & { deadline: number } {
    onCall?.(call);
    return callContextFrom({ deadline: call.getDeadline(), timeoutMs, principal: securedCallOf(call.metadata)?.principal?.id });
  }

  function deadlineError(ctx: CallContext): SvcError {
    return new SvcError('DEADLINE_EXCEEDED', 'the call did not finish before its deadline', { deadline: new Date(ctx.deadline ?? Date.now()).toISOString() });
  }

  /** Fails the call when its deadline (wall-clock milliseconds, as grpc-js gives it) passes, timed on the injected clock. */
  function deadlineTimer(ctx: CallContext & { deadline: number }, fail: (error: SvcError) => void): TimerHandle {
    return clock.setTimeout(() => fail(deadlineError(ctx)), ctx.deadline - Date.now());
  }

  function report(error: unknown, ctx: CallContext, method: string): void {
    if (!(error instanceof SvcError)) log?.error({ err: error, trace_id: ctx.trace_id, method }, 'grpc call failed unexpectedly');
  }

  /** A unary handler around `run`, with the per-call timer that turns an overrun into DEADLINE_EXCEEDED. */
  function unary<Req, Res>(method: string, run: (request: Req, ctx: CallContext, metadata: Metadata) => Promise<Res>) {
    return (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>): void => {
      const ctx = contextOf(call, requestTimeoutMs);
      let settled = false;
      const fail = (error: unknown): void => {
        if (settled) return;
        settled = true;
        clock.clearTimeout(timer);
        report(error, ctx, method);
        callback(toGrpcStatus(error, ctx.trace_id));
      };
      const timer = deadlineTimer(ctx, fail);
      let result: Promise<Res>;
      try {
        const refused = rejectionOf(call.request);
        if (refused !== undefined) throw refused;
        result = run(call.request, ctx, call.metadata);
      } catch (error) {
        fail(error);
        return;
      }
      result.then((value) => {
        if (settled) return;
        settled = true;
        clock.clearTimeout(timer);
        callback(null, value);
      }, fail);
    };
  }

  /**
   * A server-streaming handler: `open` subscribes (validating the request) and
   * writes through the sink it returns; grpc-js's buffering is the sink's
   * back-pressure, and a cancelled call releases the subscription at once.
   */
  function serverStream<Req, Item>(method: string, open: (request: Req, write: (item: Item) => void | Promise<unknown>, ctx: CallContext) => BoundedSink, toProto: (item: Item) => unknown) {
    return (call: ServerWritableStream<Req, unknown>): void => {
      const ctx = contextOf(call);
      let sink: BoundedSink | undefined;
      let timer: TimerHandle | undefined;
      let ended = false;
      const end = (): boolean => {
        if (ended) return false;
        ended = true;
        streamsOpen.delete(fail);
        if (timer !== undefined) clock.clearTimeout(timer);
        sink?.close();
        return true;
      };
      function fail(error: unknown): void {
        if (!end()) return;
        report(error, ctx, method);
        call.emit('error', toGrpcStatus(error, ctx.trace_id));
      }
      // Released at once: a cancelled call must not keep its subscription a moment longer.
      call.on('cancelled', end);
      // Back-pressure: while grpc-js buffers, the sink waits for 'drain' and queues (bounded) meanwhile.
      const write = (item: Item): void | Promise<unknown> => {
        const proto = toProto(item);
        if (proto === undefined || ended) return undefined;
        return call.write(proto) ? undefined : once(call, 'drain');
      };
      try {
        const refused = rejectionOf(call.request);
        if (refused !== undefined) throw refused;
        sink = open(call.request, write, ctx);
      } catch (error) {
        fail(error);
        return;
      }
      if (ended) {
        sink.close();
        return;
      }
      streamsOpen.add(fail);
      // Headers now, not with the first item: they tell the client the subscription is in place (the interceptor adds x-trace-id).
      call.sendMetadata(new Metadata());
      sink.done.then(() => {
        if (end()) call.end();
      }, fail);
      if (Number.isFinite(ctx.deadline)) timer = deadlineTimer(ctx, fail);
    };
  }

  const subscribeMessages = serverStream(
    'SubscribeMessages',
    (request: { filter: unknown }, write: (event: BusEvent) => void | Promise<unknown>, ctx) => service.subscribe(request.filter, write, ctx),
    (event: BusEvent) => {
      const message = streamedMessage(event);
      return message === undefined ? undefined : messageToProto(message);
    },
  );

  const implementation: UntypedServiceImplementation = {
    DeployAgent: unary('DeployAgent', (request: ProtoDeployAgentRequest, ctx) => service.deploy(deployRequestFrom(request), ctx)),
    UndeployAgent: unary('UndeployAgent', async (request: { agent_id: string }, ctx) => {
      await service.undeploy(request.agent_id, ctx);
      return {};
    }),
    ListAgents: unary('ListAgents', (request: ProtoListAgentsRequest, ctx) => service.list(listRequestFrom(request), ctx)),
    GetAgent: unary('GetAgent', (request: { agent_id: string }, ctx) => service.get(request.agent_id, ctx)),
    RestartAgent: unary('RestartAgent', (request: { agent_id: string }, ctx) => service.restart(request.agent_id, ctx)),
    // proto-loader fills an unset `resources` with null: the service reads that as "unchanged".
    UpdateAgent: unary('UpdateAgent', (request: Record<string, unknown>, ctx) => service.update(request, ctx)),
    SendMessage: unary('SendMessage', (request: { message: unknown }, ctx) => service.send(request.message, ctx)),
    CallAgent: unary('CallAgent', async (request: { message: unknown; timeout_ms: number }, ctx) => messageToProto(await service.call(request.message, ctx, { timeout_ms: request.timeout_ms }))),
    SubscribeMessages: subscribeMessages,
    GetAgentLogs: unary('GetAgentLogs', (request: { agent_id: string; limit: number }, ctx) => service.logs(request.agent_id, ctx, request.limit)),
    FollowAgentLogs: serverStream(
      'FollowAgentLogs',
      (request: { agent_id: string }, write: (line: AgentLogLine) => void | Promise<unknown>, ctx) => service.followLogs(request.agent_id, write, ctx),
      (line: AgentLogLine) => line,
    ),
    Health: unary('Health', (_request: unknown, ctx) => service.health(ctx)),
    Metrics: unary('Metrics', (_request: unknown, ctx) => service.metrics(ctx)),
    ListMembers: unary('ListMembers', (_request: unknown, ctx) => service.members(ctx)),
  };
  for (const [name, method] of Object.entries(SECURITY_METHODS)) {
    implementation[name] = unary(name, async (request: Record<string, unknown>, _ctx, metadata) => {
      const secured = securedCallOf(metadata);
      if (options.security === undefined || secured === undefined) {
        throw new SvcError('UNAVAILABLE', 'this listener was built without the security service', { reason: 'security_unavailable' });
      }
      return method(options.security, request, secured);
    });
  }

  return {
    implementation,
    get streams() {
      return streamsOpen.size;
    },
    endStreams(error) {
      for (const fail of [...streamsOpen]) fail(error);
    },
  };
}
