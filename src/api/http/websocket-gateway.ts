/**
 * The streaming RPCs over WebSocket (`ws` in noServer mode, fed by the HTTP
 * server's `upgrade` event): `GET /api/v1/messages?agent_id=&message_types=`
 * and `GET /api/v1/agents/{id}/messages`, as the proto's rules for
 * SubscribeMessages say, and `GET /api/v1/agents/{id}/logs/follow`
 * (FollowAgentLogs: one AgentLogLine a frame). The filter is read and checked before the upgrade,
 * so a bad one is an HTTP 400 with an Error body (an unknown agent a 404),
 * not a socket that closes. Only WebSocket version 13 is accepted. A client
 * that goes away is an ordinary end of its stream, logged at debug.
 *
 * Each text frame is one Message in its JSON form. Only messages travel, each
 * once: the `sent` event (and the platform's own `platform` messages); the
 * `delivered` copy of the same message and lifecycle events are not framed.
 *
 * A slow client is bounded exactly as a slow bus subscriber: frames go out at
 * once while the socket's unsent bytes are under a high-water mark; above it
 * the write waits for the frame's send callback, events queue in the service's
 * BoundedSink, and past its buffer the client is dropped (close 1008, reason
 * `RESOURCE_EXHAUSTED: slow_consumer`, then the socket is cut, since a client
 * that does not read will not read the close frame either).
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { context } from '@opentelemetry/api';
import type protobuf from 'protobufjs';
import { WebSocket, WebSocketServer } from 'ws';
import type { Clock, TimerHandle } from '../../../supervisors/index.js';
import type { AgentService, CallContext } from '../../agents/agent-service-types.js';
import type { BoundedSink } from '../../bus/bounded-sink.js';
import type { BusEvent } from '../../bus/events.js';
import { validateFilter, type BusFilter } from '../../bus/filter.js';
import type { Message } from '../../bus/message.js';
import { SvcError, isSvcError } from '../../errors/svc-error.js';
import { callContext, describeRequest, type DoorTelemetry } from '../api-call.js';
import { asSvcError, rawHttpError } from './error-body.js';
import { beginHttpCall, pathOf, type HttpCall } from './http-call.js';
import { encodeMessage } from './json-codec.js';
import type { HttpRoute } from './routes.js';
import { transcode } from './transcode.js';
import { requireHost } from './middleware-request-target.js';
import type { WebSocketAdmission } from './websocket-admission.js';

/** Close codes (RFC 6455 section 7.4.1). */
export const CLOSE = { goingAway: 1001, policyViolation: 1008, internalError: 1011 } as const;

/** RFC 6455's version; `ws` also speaks draft 8, which no current client sends and this server does not offer. */
export const WEBSOCKET_VERSION = '13';
/** What a socket's failure says when the client simply went away: an ordinary end of a stream, not a fault. */
const DISCONNECT_CODES: ReadonlySet<string> = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'ETIMEDOUT', 'ERR_STREAM_DESTROYED', 'ERR_STREAM_WRITE_AFTER_END']);

/** Clients only listen; a frame from them is never large, and anything bigger is a misuse. */
const MAX_CLIENT_FRAME_BYTES = 4 * 1024;
/** How long a dropped client has to take its close frame before the socket is cut. */
const CLOSE_GRACE_MS = 1_000;
/** RFC 6455 limits a close reason to 123 bytes. */
const MAX_REASON_BYTES = 123;

export interface WebSocketGatewayOptions {
  /** The routes of the server-streaming RPCs (GET). */
  routes: readonly HttpRoute[];
  /** Ping period; a client that has not answered the previous ping by the next one is cut. */
  pingIntervalMs: number;
  /** Unsent bytes per socket above which a write waits for the socket to drain. */
  highWaterMarkBytes: number;
  /** Whether upgrades are accepted (not while draining). */
  accepting(): boolean;
  telemetry: DoorTelemetry;
  /** `svc.v1.AgentLogLine`, the frames of a FollowAgentLogs stream. */
  logLineType: protobuf.Type;
  /** The security steps (websocket-admission.ts); without them every stream runs as `anonymous`. */
  admit?: WebSocketAdmission;
  /** Runs the pings and the close grace. */
  clock: Clock;
}

export interface WebSocketGateway {
  /** For the HTTP server's `upgrade` event. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Open streams. */
  readonly clients: number;
  /** Closes every stream with 1001 and stops pinging. */
  close(): Promise<void>;
}

type Send = (frame: string) => void | Promise<void>;
/** Subscribes a stream's source, writing each frame with `send`. */
type Opener = (send: Send) => BoundedSink;

interface Client {
  alive: boolean;
  sink?: BoundedSink;
}

function reasonText(text: string): string {
  const bytes = Buffer.from(text, 'utf8');
  return bytes.length <= MAX_REASON_BYTES ? text : bytes.subarray(0, MAX_REASON_BYTES).toString('utf8').replace(/\uFFFD+$/, '');
}

/** Writes an HTTP error answer on a socket that was never upgraded, and closes the call with it. */
function refuse(socket: Duplex, err: unknown, call: HttpCall): void {
  const error = asSvcError(err);
  call.answered(error.httpStatus, error);
  call.api.end();
  // RFC 6455 section 4.4: a refused version is answered with the versions the server speaks.
  const headers: Record<string, string> = error.metadata.reason === 'unsupported_version' ? { 'Sec-WebSocket-Version': WEBSOCKET_VERSION } : {};
  if (socket.writable) socket.end(rawHttpError(error, call.api.answerTraceId, headers), () => socket.destroy());
  else socket.destroy();
}

function checkVersion(req: IncomingMessage): void {
  const version = req.headers['sec-websocket-version'];
  if (version === WEBSOCKET_VERSION) return;
  throw new SvcError('INVALID_ARGUMENT', `WebSocket version ${version === undefined ? '(none)' : version.slice(0, 16)} is not supported; use ${WEBSOCKET_VERSION}`, {
    field: 'Sec-WebSocket-Version',
    reason: 'unsupported_version',
  });
}

/** Whether a stream's failure is only its client going away: the socket is no longer open, or failed as a closed connection does. */
function isDisconnect(ws: WebSocket, err: unknown): boolean {
  if (isSvcError(err)) return false;
  const code = (err as { code?: unknown } | null)?.code;
  return ws.readyState !== WebSocket.OPEN || (typeof code === 'string' && DISCONNECT_CODES.has(code));
}

/** The query of a request target; URLSearchParams never throws, where `new URL` would on a target like `//[::1`. */
function queryOf(search: string): Record<string, string[]> {
  const query: Record<string, string[]> = Object.create(null) as Record<string, string[]>;
  for (const [name, value] of new URLSearchParams(search)) (query[name] ??= []).push(value);
  return query;
}

export function createWebSocketGateway(service: AgentService, messageType: protobuf.Type, options: WebSocketGatewayOptions): WebSocketGateway {
  const { telemetry, clock } = options;
  const { log, metrics } = telemetry;
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_CLIENT_FRAME_BYTES, perMessageDeflate: false, clientTracking: false });
  const clients = new Map<WebSocket, Client>();
  // ws answers a malformed handshake with a bare 400 unless 'wsClientError' has a listener; with
  // this one the refusal is an Error body naming the trace, like every other, and is counted.
  const handshakes = new WeakMap<IncomingMessage, HttpCall>();
  wss.on('wsClientError', (err, socket, req) => {
    const call = handshakes.get(req);
    if (call === undefined) return void socket.destroy();
    refuse(socket, new SvcError('INVALID_ARGUMENT', `WebSocket handshake refused: ${err.message}`, { reason: 'bad_handshake' }), call);
  });
  // The 101 answer names the stream's trace, as every other answer of the REST door does.
  wss.on('headers', (headers, req) => {
    const call = handshakes.get(req);
    if (call !== undefined) headers.push(`X-Trace-Id: ${call.api.answerTraceId}`);
  });
  // Many subscribers see the same event object: its frame is built once.
  const frames = new WeakMap<Message, string>();

  // Armed only while there are clients, so an idle listener holds no timer.
  let pinger: TimerHandle | undefined;
  function ping(): void {
    pinger = undefined;
    for (const [ws, client] of clients) {
      if (!client.alive) {
        ws.terminate();
        continue;
      }
      client.alive = false;
      ws.ping();
    }
    if (clients.size > 0) pinger = clock.setTimeout(ping, options.pingIntervalMs);
  }

  function frameOf(message: Message): string {
    let frame = frames.get(message);
    if (frame === undefined) {
      frame = JSON.stringify(encodeMessage(messageType, message));
      frames.set(message, frame);
    }
    return frame;
  }

  function closeSoon(ws: WebSocket, code: number, reason: string): void {
    if (ws.readyState === WebSocket.CLOSED) return;
    if (ws.readyState === WebSocket.OPEN) ws.close(code, reasonText(reason));
    const cut = clock.setTimeout(() => ws.terminate(), CLOSE_GRACE_MS);
    ws.once('close', () => clock.clearTimeout(cut));
  }

  function onSinkEnd(ws: WebSocket, err: unknown, call: HttpCall): void {
    if (err === undefined) return closeSoon(ws, CLOSE.goingAway, 'stream ended');
    if (isDisconnect(ws, err)) {
      // An ordinary end of a stream: no stack, and not at a level an operator watches (the socket's 'close' ends the call).
      const code = (err as { code?: unknown } | null)?.code;
      log?.debug({ reason: typeof code === 'string' ? code : 'closed', trace_id: call.api.traceId }, 'websocket client disconnected');
      ws.terminate();
      return;
    }
    call.api.fail(asSvcError(err));
    if (isSvcError(err) && err.code === 'RESOURCE_EXHAUSTED') {
      log?.warn({ metadata: err.metadata, trace_id: call.api.traceId }, 'websocket subscriber dropped');
      return closeSoon(ws, CLOSE.policyViolation, `RESOURCE_EXHAUSTED: ${err.metadata.reason ?? err.message}`);
    }
    if (!isSvcError(err)) log?.error({ err, trace_id: call.api.traceId }, 'websocket stream failed');
    const code = isSvcError(err) ? err.code : 'INTERNAL';
    closeSoon(ws, CLOSE.internalError, `${code}: ${isSvcError(err) ? err.message : 'internal error'}`);
  }

  /** Sends a frame at once while the socket's unsent bytes are under the high-water mark, else when the socket took it. */
  function sender(ws: WebSocket): Send {
    return (frame) => {
      if (ws.readyState !== WebSocket.OPEN) return undefined;
      if (ws.bufferedAmount < options.highWaterMarkBytes) {
        ws.send(frame);
        return undefined;
      }
      return new Promise<void>((resolve, reject) => ws.send(frame, (err) => (err ? reject(err) : resolve())));
    };
  }

  /** SubscribeMessages: the `sent` copy of each message (and the platform's own), never the `delivered` one or a lifecycle event. */
  async function messages(request: Record<string, unknown>, ctx: CallContext): Promise<Opener> {
    const filter: BusFilter = validateFilter(request.filter);
    // Checked before the upgrade, so an unknown agent is an HTTP 404 rather than a socket that closes at once;
    // `subscribe` checks again (for gRPC, and an agent undeployed meanwhile).
    if (filter.agent_id !== undefined) await service.get(filter.agent_id, ctx);
    return (send) => service.subscribe(filter, (event: BusEvent) => (event.kind !== 'message' || event.direction === 'delivered' ? undefined : send(frameOf(event.message))), ctx);
  }

  /** FollowAgentLogs: the agent's log lines from now on, one AgentLogLine a frame. */
  async function logLines(request: Record<string, unknown>, ctx: CallContext): Promise<Opener> {
    const agentId = typeof request.agent_id === 'string' ? request.agent_id : '';
    await service.get(agentId, ctx);
    return (send) => service.followLogs(agentId, (line) => send(JSON.stringify(encodeMessage(options.logLineType, line))), ctx);
  }

  function stream(ws: WebSocket, open: Opener, call: HttpCall): void {
    const client: Client = { alive: true };
    clients.set(ws, client);
    pinger ??= clock.setTimeout(ping, options.pingIntervalMs);
    call.answered(101);
    metrics?.websocketConnections.inc();
    ws.on('pong', () => {
      client.alive = true;
    });
    ws.on('close', () => {
      clients.delete(ws);
      client.sink?.close();
      metrics?.websocketConnections.dec();
      // The stream's span covers its whole life, as a gRPC stream's does.
      call.api.end();
    });
    // A socket error is followed by 'close'; the listener keeps it from being an uncaught exception.
    ws.on('error', () => undefined);

    try {
      client.sink = open(sender(ws));
    } catch (err) {
      onSinkEnd(ws, err, call);
      return;
    }
    client.sink.done.then(
      () => {
        if (ws.readyState === WebSocket.OPEN) onSinkEnd(ws, undefined, call);
      },
      (err: unknown) => onSinkEnd(ws, err, call),
    );
  }

  /** Runs in the call's context, so the service's work is part of the stream's span. */
  async function upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, call: HttpCall): Promise<void> {
    if (!options.accepting()) throw new SvcError('UNAVAILABLE', 'the server is draining', { reason: 'draining' });
    requireHost(req);
    checkVersion(req);
    const target = req.url ?? '/';
    const path = pathOf(target);
    if (call.found === undefined) throw new SvcError('NOT_FOUND', `no WebSocket stream at ${path}`, { path });
    const { route, params } = call.found;
    const principal = await options.admit?.(req, route, call.api.answerTraceId);
    const request = transcode(route, { params, query: queryOf(target.slice(path.length + 1)) });
    describeRequest(call.api.span, call.operation, request);
    const ctx = callContext(undefined, principal);
    const open = route.rpc === 'FollowAgentLogs' ? await logLines(request, ctx) : await messages(request, ctx);
    if (socket.destroyed) {
      // The client left before its answer: nothing was answered, so nothing is counted.
      call.api.end();
      return;
    }
    handshakes.set(req, call);
    wss.handleUpgrade(req, socket, head, (ws) => stream(ws, open, call));
  }

  return {
    handleUpgrade(req, socket, head) {
      const call = beginHttpCall(telemetry, options.routes, req, true);
      // Until ws takes the socket over, its errors (a client gone mid-handshake) are ours to absorb.
      const onError = (): void => void socket.destroy();
      socket.on('error', onError);
      context.with(call.api.context, () => upgrade(req, socket, head, call)).then(
        () => socket.off('error', onError),
        (err: unknown) => refuse(socket, err, call),
      );
    },
    get clients() {
      return clients.size;
    },
    async close() {
      if (pinger !== undefined) clock.clearTimeout(pinger);
      pinger = undefined;
      const closed = [...clients.keys()].map((ws) => new Promise<void>((resolve) => {
        ws.once('close', () => resolve());
        clients.get(ws)?.sink?.close();
        closeSoon(ws, CLOSE.goingAway, 'server shutting down');
      }));
      await Promise.all(closed);
      wss.close();
    },
  };
}
