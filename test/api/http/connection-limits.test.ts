/** The server section's connection limits on the HTTP listener, over raw sockets. */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { call, eventually, startGateway, type Gateway } from './http-fixtures.js';

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
  // An answer on each proves the server accepted both (a client's 'connect' comes from the kernel, before that).
  for (const held of [first, second]) {
    held.socket.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
    await eventually(() => (held.data().includes('\r\n\r\n') ? true : undefined));
  }
  const third = await open();
  third.socket.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
  assert.ok((await third.closed) < 250, 'refused before the header timeout');
  assert.equal(third.data(), '');
  first.socket.destroy();
  second.socket.destroy();
  await Promise.all([first.closed, second.closed]);
  // Capacity comes back once the server has seen the closes: until then a new connection is still dropped.
  const health = await eventually(() => call(gw.base, 'GET', '/health', undefined, { connection: 'close' }).catch(() => undefined));
  assert.equal(health.status, 200);
});

/** The one HTTP answer a raw connection got: status, headers and the parsed JSON body; fails on anything after it. */
function onlyAnswer(raw: string): { status: number; headers: Map<string, string>; body: { code: string; message: string; trace_id: string; metadata: Record<string, string> } } {
  const head = raw.slice(0, raw.indexOf('\r\n\r\n'));
  const [statusLine, ...lines] = head.split('\r\n');
  const headers = new Map(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()] as const));
  const length = Number(headers.get('content-length'));
  const rest = raw.slice(head.length + 4);
  assert.equal(Buffer.byteLength(rest), length, `nothing after the answer: ${JSON.stringify(rest)}`);
  return { status: Number(statusLine?.split(' ')[1]), headers, body: JSON.parse(rest) as never };
}

test('connection_timeout: headers not complete in time get 504 DEADLINE_EXCEEDED in the Error shape, and the connection closes', async () => {
  const conn = await open();
  conn.socket.write('GET /health HTTP/1.1\r\nHost: x\r\n');
  const ms = await conn.closed;
  const answer = onlyAnswer(conn.data());
  assert.equal(answer.status, 504);
  assert.equal(answer.body.code, 'DEADLINE_EXCEEDED');
  assert.equal(answer.body.metadata.reason, 'request_timeout');
  assert.match(answer.body.trace_id, /^[0-9a-f]{32}$/);
  assert.equal(answer.headers.get('x-trace-id'), answer.body.trace_id);
  assert.equal(answer.headers.get('connection'), 'close');
  assert.ok(ms >= 250 && ms < 1_500, `${ms} ms`);
});

test('request_timeout: a body that never completes is cut with one 504, and nothing written after it', async () => {
  const conn = await open();
  conn.socket.write('POST /api/v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"receiver":');
  const ms = await conn.closed;
  // Node's own request timeout used to add a second, unsolicited 408 after the deadline middleware's answer.
  const answer = onlyAnswer(conn.data());
  assert.equal(answer.status, 504);
  assert.equal(answer.body.code, 'DEADLINE_EXCEEDED');
  assert.ok(ms >= 550 && ms < 2_000, `${ms} ms`);
});

test('a request Node cannot parse gets 400 INVALID_ARGUMENT, headers too large 413 PAYLOAD_TOO_LARGE, both in the Error shape; the server goes on', async () => {
  const garbage = await open();
  garbage.socket.write('HELLO WORLD\r\n\r\n');
  await garbage.closed;
  const bad = onlyAnswer(garbage.data());
  assert.equal(bad.status, 400);
  assert.equal(bad.body.code, 'INVALID_ARGUMENT');
  assert.equal(bad.body.message, 'malformed HTTP request');
  assert.match(bad.body.metadata.reason ?? '', /^HPE_/);

  const large = await open();
  large.socket.write(`GET /health HTTP/1.1\r\nHost: x\r\nX-Filler: ${'a'.repeat(20_000)}\r\n\r\n`);
  await large.closed;
  const tooLarge = onlyAnswer(large.data());
  assert.equal(tooLarge.status, 413);
  assert.equal(tooLarge.body.code, 'PAYLOAD_TOO_LARGE');

  assert.equal((await call(gw.base, 'GET', '/health', undefined, { connection: 'close' })).status, 200);
});

test('keepalive_timeout: an idle kept-alive connection is closed', async () => {
  const conn = await open();
  conn.socket.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
  const ms = await conn.closed;
  assert.match(conn.data(), /^HTTP\/1\.1 200 /);
  assert.ok(ms >= 250 && ms < 1_500, `${ms} ms`);
});
