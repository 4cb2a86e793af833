/**
 * The gRPC listener's TCP front: `server.max_connections` and
 * `server.connection_timeout`, which grpc-js has no options for.
 *
 * We own the `net.Server` and hand each accepted socket to grpc-js through
 * its connection injector (`Server#createConnectionInjector`, gRFC L114), so
 * we see every connection open and close. Past the limit a connection is not
 * just reset: it gets a minimal HTTP/2 session that answers each call with
 * UNAVAILABLE and the `svc-error-bin` trailer (`reason: connection_limit`),
 * then a GOAWAY, so a client learns why instead of seeing a dropped socket.
 *
 * `connection_timeout` is the time a connection may take to send its first
 * request: a timer per new connection, cleared when a call arrives from that
 * peer (grpc-js names a call's peer `remoteAddress:remotePort`, the socket's
 * own fields), destroys the socket when it fires.
 */
import http2 from 'node:http2';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import type { Clock, TimerHandle } from '../../../supervisors/index.js';
import type { GrpcErrorStatus } from './grpc-errors.js';
import { ERROR_TRAILER } from './grpc-errors.js';

/** How long a refused connection may stay open to read its answer; then it is destroyed. */
const REFUSAL_GRACE_MS = 1_000;
/** Refusals in progress at once; past this a connection flood is met with plain resets, so refusing costs bounded memory. */
const MAX_REFUSING = 64;

export interface ConnectionLimitOptions {
  maxConnections: number;
  /** 0 disables the first-request timer. */
  connectionTimeoutMs: number;
  /** Hands an accepted connection to grpc-js. */
  accept(socket: Socket): void;
  /** The status a refused connection's calls end with. */
  refusal(): GrpcErrorStatus;
  /** Runs the first-request and refusal timers. */
  clock: Clock;
}

export interface ConnectionLimiter {
  /** Resolves with the bound address (port 0 binds an ephemeral port). */
  listen(host: string, port: number): Promise<AddressInfo>;
  /** A call arrived: its connection is no longer waiting for a first request. */
  sawRequest(call: { getPeer(): string }): void;
  /** Accepted connections open now. */
  readonly open: number;
  /** Connections refused since start. */
  readonly refused: number;
  /** Stops accepting and drops refusals in progress; accepted connections are grpc-js's to close. */
  close(): Promise<void>;
}

function peerOf(socket: Socket): string {
  return `${socket.remoteAddress}:${socket.remotePort}`;
}

export function createConnectionLimiter(options: ConnectionLimitOptions): ConnectionLimiter {
  const { maxConnections, connectionTimeoutMs, clock } = options;
  let open = 0;
  let refused = 0;
  const waiting = new Map<string, TimerHandle>();
  /** Each refused connection and the timer that cuts it once its grace is over. */
  const refusing = new Map<Socket, TimerHandle>();

  const refuser = http2.createServer();
  refuser.on('session', (session) => session.on('error', () => undefined));
  refuser.on('stream', (stream) => {
    stream.on('error', () => undefined);
    const status = options.refusal();
    const [trailer] = status.metadata.get(ERROR_TRAILER);
    stream.respond(
      {
        ':status': 200,
        'content-type': 'application/grpc',
        'grpc-status': String(status.code),
        'grpc-message': encodeURIComponent(status.details),
        ...(trailer instanceof Buffer ? { [ERROR_TRAILER]: trailer.toString('base64') } : {}),
      },
      { endStream: true },
    );
    stream.session?.close();
  });

  function refuse(socket: Socket): void {
    refused++;
    if (refusing.size >= MAX_REFUSING) {
      socket.destroy();
      return;
    }
    refusing.set(socket, clock.setTimeout(() => socket.destroy(), REFUSAL_GRACE_MS));
    socket.on('close', () => {
      clock.clearTimeout(refusing.get(socket));
      refusing.delete(socket);
    });
    refuser.emit('connection', socket);
  }

  function accept(socket: Socket): void {
    open++;
    const peer = peerOf(socket);
    if (connectionTimeoutMs > 0) {
      const timer = clock.setTimeout(() => {
        waiting.delete(peer);
        socket.destroy();
      }, connectionTimeoutMs);
      waiting.set(peer, timer);
    }
    socket.once('close', () => {
      open--;
      clock.clearTimeout(waiting.get(peer));
      waiting.delete(peer);
    });
    options.accept(socket);
  }

  // noDelay: gRPC frames are small and latency-bound; Nagle would hold a response behind an unacknowledged one.
  const server = createServer({ noDelay: true }, (socket) => {
    socket.on('error', () => undefined);
    if (open >= maxConnections) refuse(socket);
    else accept(socket);
  });

  return {
    listen(host, port) {
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen({ host, port }, () => {
          server.off('error', reject);
          resolve(server.address() as AddressInfo);
        });
      });
    },
    sawRequest(call) {
      // Checked first: once every connection has sent a request the map is empty and a call costs one size check.
      if (waiting.size === 0) return;
      const peer = call.getPeer();
      const timer = waiting.get(peer);
      if (timer === undefined) return;
      clock.clearTimeout(timer);
      waiting.delete(peer);
    },
    get open() {
      return open;
    },
    get refused() {
      return refused;
    },
    close() {
      for (const socket of refusing.keys()) socket.destroy();
      return new Promise((resolve) => {
        if (!server.listening) resolve();
        else server.close(() => resolve());
      });
    },
  };
}
