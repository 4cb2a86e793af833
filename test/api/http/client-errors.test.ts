/**
 * answerClientErrors (src/api/http/client-errors.ts) on a bare Node server,
 * so Node's request timeout, not the gateway's deadline, is what fires: a
 * request still being worked on gets the 504 with its call's trace id; one
 * whose answer has gone gets nothing more.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { answerClientErrors } from '../../../src/api/http/client-errors.js';

const REQUEST_TIMEOUT_MS = 300;
let server: Server;
let port: number;

before(async () => {
  server = createServer({ connectionsCheckingInterval: 50, requestTimeout: REQUEST_TIMEOUT_MS, headersTimeout: REQUEST_TIMEOUT_MS }, (req, res) => {
    // As the gateway's telemetry middleware does first of all.
    res.setHeader('X-Trace-Id', 'req-7');
    if (req.url === '/answers-early') res.end('early');
    if (req.url === '/answers-later') setTimeout(() => res.end('later'), 100);
    // '/works-on': the gateway is still busy when Node's timeout fires; it never answers here.
  });
  answerClientErrors(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** Writes `request`, then returns everything the server wrote until it closed the connection (bounded). */
function exchange(request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    const guard = setTimeout(() => {
      socket.destroy();
      reject(new Error(`still open after 5 s; got ${JSON.stringify(text)}`));
    }, 5_000);
    socket.on('data', (chunk) => (text += String(chunk)));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(guard);
      resolve(text);
    });
    socket.write(request);
  });
}

const STALLED = (path: string): string => `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a":`;

test('Node\'s request timeout while the request is still worked on: one 504 DEADLINE_EXCEEDED with the call\'s trace id', async () => {
  const text = await exchange(STALLED('/works-on'));
  const [head, body] = text.split('\r\n\r\n');
  assert.match(head ?? '', /^HTTP\/1\.1 504 /);
  assert.match(head ?? '', /\r\nX-Trace-Id: req-7(\r\n|$)/);
  assert.match(head ?? '', /\r\nConnection: close\r\n/);
  assert.deepEqual(JSON.parse(body ?? ''), {
    code: 'DEADLINE_EXCEEDED',
    message: 'the request was not received within request_timeout',
    trace_id: 'req-7',
    metadata: { reason: 'request_timeout' },
  });
});

test('Node\'s request timeout after the answer went, its body still arriving: nothing more is written', async () => {
  const text = await exchange(STALLED('/answers-early'));
  assert.match(text, /^HTTP\/1\.1 200 /);
  assert.ok(text.endsWith('early'), `one answer only: ${JSON.stringify(text)}`);
  assert.equal(text.match(/HTTP\/1\.1 /g)?.length, 1);
});

test('a malformed request pipelined after one still worked on: that one is answered first, then the 400 with a trace of its own', async () => {
  const text = await exchange('GET /answers-later HTTP/1.1\r\nHost: x\r\n\r\nGARBAGE\r\n\r\n');
  // Before: the 400 went out at once, in the place of the first request's answer, which was lost.
  assert.match(text, /^HTTP\/1\.1 200 /);
  const second = text.indexOf('later') + 'later'.length;
  assert.ok(second > 'later'.length, `the first answer is whole: ${JSON.stringify(text)}`);
  const [head, body] = text.slice(second).split('\r\n\r\n');
  assert.match(head ?? '', /^HTTP\/1\.1 400 /);
  const error = JSON.parse(body ?? '');
  assert.equal(error.code, 'INVALID_ARGUMENT');
  assert.notEqual(error.trace_id, 'req-7');
});
