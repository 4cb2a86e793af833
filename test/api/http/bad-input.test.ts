/**
 * The bad-input matrix: each case answers its code with the status of the
 * error table and an Error body, never a 500, and the server stays up.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { call, deployEcho, ECHO_WASM, startGateway, type Answer, type Gateway } from './http-fixtures.js';

let gw: Gateway;
let agent: string;
const MiB = 1024 * 1024;
before(async () => {
  // 1 MiB modules: the body limit is about 1.4 MiB, so both limits are reachable quickly.
  gw = await startGateway(['--runtime.max_module_size=1MiB']);
  agent = await deployEcho(gw.base, 'target');
});
after(() => gw.stop());

function expectError(answer: Answer, status: number, code: string, metadata: Record<string, string> = {}): void {
  assert.equal(answer.status, status, answer.text);
  assert.deepEqual(Object.keys(answer.body), ['code', 'message', 'trace_id', 'metadata'], answer.text);
  assert.equal(answer.body.code, code, answer.text);
  assert.match(answer.body.trace_id, /^[0-9a-f]{32}$/);
  assert.doesNotMatch(answer.body.message, /\bat .*\.(ts|js):\d+/, 'no stack trace');
  for (const [key, value] of Object.entries(metadata)) assert.equal(answer.body.metadata[key], value, `${key} in ${answer.text}`);
}

/** Raw requests, for what fetch will not send: lying lengths, chunked uploads, odd encodings. */
function raw(method: string, path: string, headers: Record<string, string>, chunks: readonly (string | Buffer)[]): Promise<Answer> {
  return new Promise((resolve, reject) => {
    // A fresh connection each: a server that answered early closes its side, and a reused socket would see the reset.
    const req = request(`${gw.base}${path}`, { method, headers, agent: false }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => {
        const text = Buffer.concat(parts).toString('utf8');
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // stays text
        }
        resolve({ status: res.statusCode ?? 0, headers: new Headers(res.headers as Record<string, string>), body, text });
      });
    });
    // The server may answer and close before the whole body is written; that answer is what is checked.
    req.on('error', reject);
    for (const chunk of chunks) req.write(chunk);
    req.end();
  });
}

const json = { 'content-type': 'application/json' };

test('malformed JSON, a non-object document, poisoned prototypes: 400 INVALID_ARGUMENT', async () => {
  for (const body of ['{"name": ', '{name: 1}', 'nul', '{"a":1}}', '\u0000']) {
    expectError(await call(gw.base, 'POST', '/api/v1/agents', body, json), 400, 'INVALID_ARGUMENT', { field: 'body' });
  }
  expectError(await call(gw.base, 'POST', '/api/v1/agents', '"just a string"', json), 400, 'INVALID_ARGUMENT');
  expectError(await call(gw.base, 'POST', '/api/v1/agents', '[1, 2]', json), 400, 'INVALID_ARGUMENT', { field: 'body', reason: 'wrong_type' });
  expectError(await call(gw.base, 'POST', '/api/v1/agents', '{"__proto__": {"admin": true}}', json), 400, 'INVALID_ARGUMENT');
  expectError(await call(gw.base, 'POST', '/api/v1/messages', `${'['.repeat(100_000)}`, json), 400, 'INVALID_ARGUMENT');
});

test('wrong types and unknown fields name the field', async () => {
  const cases: Array<[string, unknown, string, string]> = [
    ['/api/v1/agents', { name: 42 }, 'name', 'wrong_type'],
    ['/api/v1/agents', { name: 'x', capabilities: 'all' }, 'capabilities', 'wrong_type'],
    ['/api/v1/agents', { name: 'x', resources: { memory_limit: -1 } }, 'resources.memory_limit', 'out_of_range'],
    ['/api/v1/agents', { name: 'x', resources: { memoryLimit: '1e9' } }, 'resources.memoryLimit', 'wrong_type'],
    ['/api/v1/agents', { name: 'x', colour: 'red' }, 'colour', 'unknown_field'],
    ['/api/v1/agents', { name: 'x', resources: { gpu: 1 } }, 'resources.gpu', 'unknown_field'],
    ['/api/v1/messages', { receiver: 'a', message_type: 'inform', content: { task: 1 } }, 'content', 'wrong_type'],
    ['/api/v1/messages', { receiver: 'a', message_type: 'inform', metadata: { k: 1 } }, 'metadata.k', 'wrong_type'],
    ['/api/v1/messages', { receiver: 'a', message_type: 7 }, 'message_type', 'wrong_type'],
    ['/api/v1/messages', { receiver: 'a', message_type: 'inform', urgency: 'high' }, 'urgency', 'unknown_field'],
    ['/api/v1/messages', { receiver: 'a', messageType: 'inform', message_type: 'inform' }, 'message_type', 'duplicate_field'],
  ];
  for (const [path, body, field, reason] of cases) expectError(await call(gw.base, 'POST', path, body), 400, 'INVALID_ARGUMENT', { field, reason });
  expectError(await call(gw.base, 'GET', '/api/v1/agents?page_size=lots'), 400, 'INVALID_ARGUMENT', { field: 'page_size' });
  expectError(await call(gw.base, 'GET', '/api/v1/agents?colour=red'), 400, 'INVALID_ARGUMENT', { field: 'colour', reason: 'unknown_field' });
});

test('invalid base64 names wasm_module', async () => {
  for (const module of ['%%%', 'A', 'AAAAA', 'AAAA=', 'AA AA']) {
    expectError(await call(gw.base, 'POST', '/api/v1/agents', { name: 'b64', wasm_module: module }), 400, 'INVALID_ARGUMENT', { field: 'wasm_module', reason: 'invalid_base64' });
  }
});

test('wrong or missing Content-Type: 400 INVALID_ARGUMENT naming Content-Type', async () => {
  const body = JSON.stringify({ receiver: agent, message_type: 'inform' });
  for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json-patch+json']) {
    expectError(await call(gw.base, 'POST', '/api/v1/messages', body, { 'content-type': type }), 400, 'INVALID_ARGUMENT', { field: 'Content-Type' });
  }
  expectError(await raw('POST', '/api/v1/messages', {}, [body]), 400, 'INVALID_ARGUMENT', { field: 'Content-Type' });
  // A charset parameter is fine.
  assert.equal((await call(gw.base, 'POST', '/api/v1/messages', body, { 'content-type': 'application/json; charset=utf-8' })).status, 202);
});

/** The documented body limit: `max_module_size` (1 MiB here) in base64 plus 64 KiB. */
const BODY_LIMIT = 4 * Math.ceil(MiB / 3) + 64 * 1024;

/** A deploy body padded with JSON whitespace to exactly `size` bytes. */
function deployBody(name: string, module: Buffer, size: number): string {
  const body = JSON.stringify({ name, wasm_module: module.toString('base64') });
  assert.ok(body.length <= size, `${body.length} bytes do not fit in ${size}`);
  return body.padEnd(size, ' ');
}

test('oversized: a body over the limit is 413 too_large from its Content-Length or while streaming; content over its own limit 413', async () => {
  const bodyLimit = { reason: 'too_large', limit: String(BODY_LIMIT) };
  const big = 'A'.repeat(2 * MiB);
  const huge = await call(gw.base, 'POST', '/api/v1/agents', { name: 'huge', wasm_module: big });
  expectError(huge, 413, 'PAYLOAD_TOO_LARGE');
  assert.deepEqual(huge.body.metadata, bodyLimit);
  // Chunked, so the size is only known while reading.
  const chunk = `{"name":"huge","wasm_module":"${'A'.repeat(MiB)}`;
  const chunked = await raw('POST', '/api/v1/agents', { ...json, 'transfer-encoding': 'chunked' }, [chunk, 'A'.repeat(MiB), '"}']);
  expectError(chunked, 413, 'PAYLOAD_TOO_LARGE');
  assert.deepEqual(chunked.body.metadata, bodyLimit);
  const content = 'x'.repeat(MiB + 1);
  expectError(await call(gw.base, 'POST', '/api/v1/messages', { receiver: agent, message_type: 'inform', content }), 413, 'PAYLOAD_TOO_LARGE', { field: 'content' });
});

test('a module over max_module_size in a body at the body limit is module_too_large; one byte more of body is the body limit', async () => {
  const padded = (size: number): Buffer => Buffer.concat([ECHO_WASM, Buffer.alloc(size - ECHO_WASM.length)]);
  // A module of exactly max_module_size fits: the body limit passes it on to admission, which reads it (trailing zeros: malformed).
  const atLimit = await call(gw.base, 'POST', '/api/v1/agents', deployBody('module-at-limit', padded(MiB), BODY_LIMIT), json);
  expectError(atLimit, 422, 'INVALID_MODULE', { reason: 'malformed' });
  const overModule = deployBody('too-big-module', padded(MiB + 1), BODY_LIMIT);
  const module = await call(gw.base, 'POST', '/api/v1/agents', overModule, json);
  expectError(module, 413, 'PAYLOAD_TOO_LARGE');
  assert.deepEqual(module.body.metadata, { reason: 'module_too_large', limit: String(MiB), size: String(MiB + 1) });
  const body = await call(gw.base, 'POST', '/api/v1/agents', `${overModule} `, json);
  expectError(body, 413, 'PAYLOAD_TOO_LARGE');
  assert.deepEqual(body.body.metadata, { reason: 'too_large', limit: String(BODY_LIMIT) });
});

test('a body shorter than its Content-Length or in an unknown encoding is INVALID_ARGUMENT; gzip is read', async () => {
  const body = JSON.stringify({ receiver: agent, message_type: 'inform', content: 'zipped' });
  assert.equal((await raw('POST', '/api/v1/messages', { ...json, 'content-encoding': 'gzip' }, [gzipSync(body)])).status, 202);
  expectError(await raw('POST', '/api/v1/messages', { ...json, 'content-encoding': 'br-nope' }, [body]), 400, 'INVALID_ARGUMENT', { field: 'Content-Encoding' });
  expectError(await raw('POST', '/api/v1/messages', { ...json, 'content-encoding': 'gzip' }, ['not gzip at all']), 400, 'INVALID_ARGUMENT');
});

test('unknown agent ids and invalid performatives', async () => {
  expectError(await call(gw.base, 'GET', '/api/v1/agents/no-such-agent'), 404, 'NOT_FOUND');
  expectError(await call(gw.base, 'DELETE', '/api/v1/agents/no-such-agent'), 404, 'NOT_FOUND');
  expectError(await call(gw.base, 'POST', '/api/v1/agents/no-such-agent/messages', { message_type: 'inform' }), 404, 'NOT_FOUND');
  expectError(await call(gw.base, 'GET', '/api/v1/agents/no-such-agent/messages'), 404, 'NOT_FOUND');
  expectError(await call(gw.base, 'GET', '/api/v1/agents/%E0%A4%A'), 404, 'NOT_FOUND');
  for (const type of ['INFORM', 'shout', '', 'inform ']) {
    const answer = await call(gw.base, 'POST', `/api/v1/agents/${agent}/messages`, { message_type: type });
    expectError(answer, 400, 'INVALID_ARGUMENT', { field: 'message_type' });
  }
  expectError(await call(gw.base, 'GET', `/api/v1/agents/${agent}/messages?message_types=inform,shout`), 400, 'INVALID_ARGUMENT', { reason: 'unknown_performative' });
});

test('a lone UTF-16 surrogate escaped in a JSON string is 400 invalid_utf16 naming the field; nothing is stored or sent', async () => {
  const module = ECHO_WASM.toString('base64');
  // Raw JSON text, as a client writes it: the escapes decode to strings that have no UTF-8 form.
  const deploys: Array<[string, string]> = [
    [`{"name":"lone-\\ud800-high","wasm_module":"${module}"}`, 'name'],
    [`{"name":"lone-low","capabilities":["ok","\\udc00"],"wasm_module":"${module}"}`, 'capabilities[1]'],
  ];
  for (const [body, field] of deploys) {
    expectError(await call(gw.base, 'POST', '/api/v1/agents', body, json), 400, 'INVALID_ARGUMENT', { field, reason: 'invalid_utf16' });
  }
  const messages: Array<[string, string]> = [
    ['{"message_type":"inform","content":"hi \\udc00"}', 'content'],
    ['{"message_type":"inform","conversation_id":"c-\\ud83d"}', 'conversation_id'],
    ['{"message_type":"inform","metadata":{"k":"\\udc00\\ud800"}}', 'metadata.k'],
  ];
  for (const [body, field] of messages) {
    expectError(await call(gw.base, 'POST', `/api/v1/agents/${agent}/messages`, body, json), 400, 'INVALID_ARGUMENT', { field, reason: 'invalid_utf16' });
  }
  const listed = await call(gw.base, 'GET', '/api/v1/agents');
  assert.equal(listed.status, 200);
  assert.deepEqual(listed.body.agents.map((a: { name: string }) => a.name).filter((name: string) => name.startsWith('lone-')), []);
  const recent = await call(gw.base, 'GET', `/api/v1/agents/${agent}/messages`);
  assert.equal(recent.status, 200);
  assert.deepEqual(recent.body.messages.filter((m: { content?: string }) => m.content?.startsWith('hi ')), []);
  assert.equal((await call(gw.base, 'GET', '/api/v1/health')).status, 200);
});

/** Writes `request` on a fresh socket and returns the answer's status and body, once the server closes the connection. */
function exchange(request: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const [host, port] = gw.address.split(':');
    const socket = connect(Number(port), host);
    let text = '';
    const guard = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer in 5 s: ${JSON.stringify(text)}`));
    }, 5_000);
    socket.on('data', (chunk) => (text += String(chunk)));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(guard);
      const [head = '', body = ''] = text.split('\r\n\r\n');
      let parsed: unknown = body;
      try {
        parsed = JSON.parse(body);
      } catch {
        // stays text
      }
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(head)?.[1] ?? 0), headers: new Headers(), body: parsed, text });
    });
    socket.write(request);
  });
}

const UPGRADE = 'Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n';

test('requests Node passes on but cannot route: an unparsable target, no Host, CONNECT, an unknown Expect; Error bodies, never a bare answer', async () => {
  // Koa's URL parser throws on this target: a bare 500 "Internal Server Error" before.
  const target = await exchange('GET http://[::1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
  expectError(target, 400, 'INVALID_ARGUMENT', { reason: 'invalid_url' });
  // The WebSocket gateway's `new URL` threw: a 500 INTERNAL before.
  expectError(await exchange(`GET //[::1/api/v1/messages HTTP/1.1\r\nHost: x\r\n${UPGRADE}\r\n`), 404, 'NOT_FOUND');
  // Node's own check answered a bare 400 with no body.
  expectError(await exchange('GET /api/v1/health HTTP/1.1\r\nConnection: close\r\n\r\n'), 400, 'INVALID_ARGUMENT', { field: 'Host', reason: 'missing_host' });
  // A WebSocket upgrade without Host got its 101 before.
  expectError(await exchange(`GET /api/v1/messages HTTP/1.1\r\n${UPGRADE}\r\n`), 400, 'INVALID_ARGUMENT', { field: 'Host', reason: 'missing_host' });
  // Node cut the connection without an answer.
  expectError(await exchange(`CONNECT ${gw.address} HTTP/1.1\r\nHost: ${gw.address}\r\n\r\n`), 404, 'NOT_FOUND', { method: 'CONNECT' });
  // Node answered a bare 417, outside the error table.
  const expect = await exchange('POST /api/v1/agents HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nExpect: 200-ok\r\n\r\n{}');
  expectError(expect, 400, 'INVALID_ARGUMENT', { field: 'Expect', reason: 'unsupported_expectation' });
  // HTTP/1.0 needs no Host.
  assert.equal((await exchange('GET /api/v1/health HTTP/1.0\r\n\r\n')).status, 200);
});

test('after all of it the server is still up', async () => {
  const health = await call(gw.base, 'GET', '/api/v1/health');
  assert.equal(health.status, 200);
  assert.equal(health.body.status, 'healthy');
});
