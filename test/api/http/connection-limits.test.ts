/** The server section's connection limits on the HTTP listener, over raw sockets. */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { call, startGateway, type Gateway } from './http-fixtures.js';

let gw: Gateway;
let host: string;
let port: number;
before(async () => {
  gw = await startGateway(['--server.max_connections=2', '--server.connection_timeout=300ms', '--server.request_timeout=600ms', '--server.keepalive_timeout=300ms']);
  const [h, p] = gw.address.split(':');
  host = h!;
  port = Number(p);
});
after(() => gw.stop());

interface Conn {
  socket: Socket;
  data: () => string;
  /** Resolves with the milliseconds from connect to close. */
  closed: Promise<number>;
}

function open(): Promise<Conn> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, host);
    let text = '';
    const started = Date.now();
    socket.on('data', (chunk) => (text += String(chunk)));
    const closed = new Promise<number>((r) => socket.on('close', () => r(Date.now() - started)));
    socket.on('error', () => undefined);
    socket.once('connect', () => resolve({ socket, data: () => text, closed }));
    socket.once('error', reject);
  });
}

test('past max_connections a new connection is closed at once, unanswered; capacity comes back when one closes', async () => {
  const first = await open();
  const second = await open();
  await new Promise((r) => setTimeout(r, 50));
  const third = await open();
  third.socket.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
  assert.ok((await third.closed) < 250, 'refused before the header timeout');
  assert.equal(third.data(), '');
  first.socket.destroy();
  second.socket.destroy();
  await Promise.all([first.closed, second.closed]);
  await new Promise((r) => setTimeout(r, 50));
  assert.equal((await call(gw.base, 'GET', '/health', undefined, { connection: 'close' })).status, 200);
});

test('connection_timeout: headers not complete in time answer 408 and close', async () => {
  const conn = await open();
  conn.socket.write('GET /health HTTP/1.1\r\nHost: x\r\n');
  const ms = await conn.closed;
  assert.match(conn.data(), /^HTTP\/1\.1 408 /);
  assert.ok(ms >= 250 && ms < 1_500, `${ms} ms`);
});

test('request_timeout: a body that never completes is cut', async () => {
  const conn = await open();
  conn.socket.write('POST /api/v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"receiver":');
  const ms = await conn.closed;
  // The deadline middleware (504 DEADLINE_EXCEEDED) or Node's own request timeout (408), whichever checks first.
  assert.match(conn.data(), /^HTTP\/1\.1 (504|408) /);
  assert.ok(ms >= 550 && ms < 2_000, `${ms} ms`);
});

test('keepalive_timeout: an idle kept-alive connection is closed', async () => {
  const conn = await open();
  conn.socket.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
  const ms = await conn.closed;
  assert.match(conn.data(), /^HTTP\/1\.1 200 /);
  assert.ok(ms >= 250 && ms < 1_500, `${ms} ms`);
});
