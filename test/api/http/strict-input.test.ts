/**
 * Strict input on the REST door (issue 41, item 5), over loopback: invalid
 * UTF-8 (also inside a gzip body), a charset other than UTF-8 and a key given
 * twice are each 400 INVALID_ARGUMENT naming the field; nothing they carried
 * was deployed or sent, and the server stays up.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { call, deployEcho, ECHO_WASM, startGateway, type Answer, type Gateway } from './http-fixtures.js';

let gw: Gateway;
let agent: string;
before(async () => {
  gw = await startGateway();
  agent = await deployEcho(gw.base, 'target');
});
after(() => gw.stop());

/** JSON text with raw bytes spliced in where `\xNN` stands. */
function body(text: string): Buffer {
  return Buffer.from(text.replace(/\\x([0-9a-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))), 'latin1');
}

async function post(path: string, bytes: Buffer, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(gw.base + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: new Uint8Array(bytes) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: JSON.parse(text) as unknown, text };
}

function expectRefused(answer: Answer, field: string, reason: string): void {
  assert.equal(answer.status, 400, answer.text);
  assert.equal(answer.body.code, 'INVALID_ARGUMENT');
  assert.deepEqual([answer.body.metadata.field, answer.body.metadata.reason], [field, reason], answer.text);
}

const module = ECHO_WASM.toString('base64');

describe('strict JSON bodies over HTTP', () => {
  it('invalid UTF-8 in a name: refused naming it, so two names cannot collide as U+FFFD', async () => {
    expectRefused(await post('/api/v1/agents', body(`{"name":"twin\\xff","wasm_module":"${module}"}`)), 'name', 'invalid_utf8');
    expectRefused(await post('/api/v1/agents', body(`{"name":"twin\\xfe","wasm_module":"${module}"}`)), 'name', 'invalid_utf8');
  });

  it('invalid UTF-8 in message content and metadata, and in a gzip body', async () => {
    expectRefused(await post('/api/v1/messages', body(`{"receiver":"${agent}","message_type":"inform","content":"\\xc3("}`)), 'content', 'invalid_utf8');
    expectRefused(await post(`/api/v1/agents/${agent}/messages`, body('{"message_type":"inform","metadata":{"k":"\\xed\\xa0\\x80"}}')), 'metadata.k', 'invalid_utf8');
    const zipped = gzipSync(body(`{"receiver":"${agent}","message_type":"inform","content":"\\x80"}`));
    expectRefused(await post('/api/v1/messages', zipped, { 'content-encoding': 'gzip' }), 'content', 'invalid_utf8');
  });

  it('a charset other than UTF-8 is refused naming Content-Type; UTF-8 in any spelling is fine', async () => {
    const message = Buffer.from(JSON.stringify({ receiver: agent, message_type: 'inform', content: 'caf\u00e9' }));
    for (const charset of ['iso-8859-1', 'utf-16', 'windows-1252', 'us-ascii']) {
      expectRefused(await post('/api/v1/messages', message, { 'content-type': `application/json; charset=${charset}` }), 'Content-Type', 'unsupported_charset');
    }
    for (const type of ['application/json; charset=UTF-8', 'application/json;charset="utf-8"', 'application/json']) {
      assert.equal((await post('/api/v1/messages', message, { 'content-type': type })).status, 202, type);
    }
  });

  it('a key given twice is refused naming it, at any depth', async () => {
    expectRefused(await post('/api/v1/messages', Buffer.from(`{"receiver":"${agent}","message_type":"inform","message_type":"request"}`)), 'message_type', 'duplicate_key');
    expectRefused(await post('/api/v1/agents', Buffer.from(`{"name":"dup","wasm_module":"${module}","resources":{"cpu_shares":1,"cpu_shares":2}}`)), 'resources.cpu_shares', 'duplicate_key');
  });

  it('none of them deployed anything; the server is up', async () => {
    const listed = await call(gw.base, 'GET', '/api/v1/agents');
    assert.deepEqual((listed.body.agents as Array<{ name: string }>).map((a) => a.name), ['target']);
    assert.equal((await call(gw.base, 'GET', '/api/v1/health')).status, 200);
  });
});
