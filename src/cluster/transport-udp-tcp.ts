/**
 * The cluster port: UDP packets and TCP exchanges on one `host:port`, with
 * Node's `dgram` and `net`. Port 0 takes an ephemeral TCP port and binds UDP
 * to the same number, trying again if UDP finds it taken.
 */
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { connect, createServer, isIP, type Server, type Socket } from 'node:net';
import { createRealClock, type Clock } from '../../supervisors/clock.js';
import { formatHostPort, parseHostPort } from './host-port.js';
import { readFrame, writeFrame } from './stream-frames.js';
import { MAX_PACKET_BYTES, MAX_STREAM_FRAME_BYTES, type Transport, type TransportHandlers } from './transport.js';

export interface UdpTcpTransportOptions {
  /** `host:port` to bind; port 0 picks one. */
  readonly bind: string;
  readonly clock?: Clock;
  /** Socket errors that do not stop the transport (a send to an unreachable host, a reset connection). */
  readonly onError?: (err: Error) => void;
  readonly maxFrameBytes?: number;
}

/** Attempts at finding an ephemeral port free for both TCP and UDP. */
const BIND_ATTEMPTS = 10;
/** An accepted connection must deliver its request within this, or it is closed. */
const ACCEPT_TIMEOUT_MS = 10_000;

function listenTcp(server: Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port, exclusive: true }, () => {
      server.off('error', reject);
      const bound = server.address();
      resolve(typeof bound === 'object' && bound !== null ? bound.port : port);
    });
  });
}

function bindUdp(socket: UdpSocket, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.bind({ address: host, port, exclusive: true }, () => {
      socket.off('error', reject);
      resolve();
    });
  });
}

const closeServer = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));
const closeUdp = (socket: UdpSocket) => new Promise<void>((resolve) => socket.close(() => resolve()));

async function bindBoth(host: string, port: number): Promise<{ server: Server; udp: UdpSocket; port: number }> {
  const type = isIP(host) === 6 ? 'udp6' : 'udp4';
  for (let attempt = 1; ; attempt++) {
    const server = createServer();
    const bound = await listenTcp(server, host, port);
    const udp = createSocket({ type, reuseAddr: false });
    try {
      await bindUdp(udp, host, bound);
      return { server, udp, port: bound };
    } catch (err) {
      await closeServer(server);
      await closeUdp(udp).catch(() => undefined);
      const taken = (err as NodeJS.ErrnoException).code === 'EADDRINUSE';
      if (!(taken && port === 0 && attempt < BIND_ATTEMPTS)) throw err;
    }
  }
}

export async function createUdpTcpTransport(options: UdpTcpTransportOptions): Promise<Transport> {
  const clock = options.clock ?? createRealClock();
  const maxFrameBytes = options.maxFrameBytes ?? MAX_STREAM_FRAME_BYTES;
  const onError = options.onError ?? (() => undefined);
  const wanted = parseHostPort(options.bind);
  const { server, udp, port } = await bindBoth(wanted.host, wanted.port);
  const address = formatHostPort(wanted.host, port);
  const open = new Set<Socket>();
  let handlers: TransportHandlers | undefined;
  let closed = false;

  udp.on('error', onError);
  udp.on('message', (bytes, remote) => handlers?.packet(bytes, formatHostPort(remote.address, remote.port)));

  server.on('connection', (socket) => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
    socket.on('error', onError);
    const timer = clock.setTimeout(() => socket.destroy(), ACCEPT_TIMEOUT_MS);
    const from = formatHostPort(socket.remoteAddress ?? '', socket.remotePort ?? 0);
    readFrame(socket, maxFrameBytes)
      .then((request) => {
        if (!handlers) throw new Error('not listening');
        return handlers.request(request, from);
      })
      .then(
        (response) => {
          writeFrame(socket, response);
          socket.end();
        },
        (err: unknown) => {
          onError(err instanceof Error ? err : new Error(String(err)));
          socket.destroy();
        },
      )
      .finally(() => clock.clearTimeout(timer));
  });

  return {
    address,
    maxPacketBytes: MAX_PACKET_BYTES,
    listen(next) {
      handlers = next;
    },
    sendPacket(to, bytes) {
      if (closed) return;
      let target;
      try {
        target = parseHostPort(to);
      } catch (err) {
        onError(err as Error);
        return;
      }
      udp.send(bytes, target.port, target.host, (err) => {
        if (err) onError(err);
      });
    },
    request(to, bytes, timeoutMs) {
      if (closed) return Promise.reject(new Error('transport closed'));
      const target = parseHostPort(to);
      return new Promise<Uint8Array>((resolve, reject) => {
        const socket = connect({ host: target.host, port: target.port });
        open.add(socket);
        const timer = clock.setTimeout(() => {
          socket.destroy();
          reject(new Error(`request to ${to} timed out after ${timeoutMs} ms`));
        }, timeoutMs);
        const done = () => {
          clock.clearTimeout(timer);
          open.delete(socket);
          socket.destroy();
        };
        socket.once('connect', () => writeFrame(socket, bytes));
        readFrame(socket, maxFrameBytes).then(
          (frame) => {
            done();
            resolve(frame);
          },
          (err: unknown) => {
            done();
            reject(err instanceof Error ? err : new Error(String(err)));
          },
        );
      });
    },
    async close() {
      if (closed) return;
      closed = true;
      handlers = undefined;
      for (const socket of open) socket.destroy();
      await Promise.all([closeServer(server), closeUdp(udp)]);
    },
  };
}
