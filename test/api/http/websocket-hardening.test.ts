/**
 * WebSocket streams under issue 41 (item 6): only version 13 is spoken, a
 * filter naming an agent that does not exist is a 404 before any upgrade,
 * and a client that goes away (a close, a reset while frames queue for it)
 * is an ordinary end: nothing at info or above, no stack, and its
 * subscription released.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { WebSocket } from 'ws';
import type { LogRecord } from '../../agents/agent-fixtures.js';
import { createLogger } from '../../../src/telemetry/logger.js';
import { call, deployEcho, eventually, startGateway, type Gateway } from './http-fixtures.js';

/** Every line down to debug, which is where an ordinary disconnect goes. */
const logs: LogRecord[] = [];
const debugLog = createLogger({
  level: 'debug',
  stream: new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line !== '') logs.push(JSON.parse(line) as LogRecord);
      done();
    },
  }),
});

let gw: Gateway;
let agent: string;
/** Bus subscriptions with no stream open (the server's own). */
let baseline: number;
before(async () => {
  gw = await startGateway(['--server.stream_buffer_size=64'], { log: debugLog });
  agent = await deployEcho(gw.base, 'ws-target');
  baseline = subscribers();
});
after(() => gw.stop());

interface Refusal {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: { code: string; metadata: Record<string, string> };
}

function refused(path: string, options: ConstructorParameters<typeof WebSocket>[2] = {}): Promise<Refusal> {
  const ws = new WebSocket(`ws://${gw.address}${path}`, options);
  return new Promise((resolve, reject) => {
    ws.once('open', () => reject(new Error(`upgrade of ${path} accepted`)));
    ws.once('error', () => undefined);
    ws.once('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += String(chunk)));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(text) as Refusal['body'] }));
    });
  });
}

function opened(path: string): Promise<WebSocket> {
  const ws = new WebSocket(`ws://${gw.address}${path}`);
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

const subscribers = (): number => gw.server.host()?.bus.stats().subscribers ?? -1;
/** Closes `ws` and waits until the server has released its subscription. */
async function closeStream(ws: WebSocket): Promise<void> {
  ws.close(1000, 'done');
  await eventually(() => (subscribers() === baseline ? true : undefined));
}
const loud = (): LogRecord[] => logs.filter((l) => l.level >= 30 && /websocket/i.test(l.msg));

describe('WebSocket versions', () => {
  it('version 8 is refused with 400, naming the header and answering the version spoken', async () => {
    const answer = await refused('/api/v1/messages', { protocolVersion: 8 });
    assert.equal(answer.status, 400);
    assert.equal(answer.body.code, 'INVALID_ARGUMENT');
    assert.deepEqual([answer.body.metadata.field, answer.body.metadata.reason], ['Sec-WebSocket-Version', 'unsupported_version']);
    assert.equal(answer.headers['sec-websocket-version'], '13');
  });

  it('version 13 is accepted', async () => {
    await closeStream(await opened('/api/v1/messages'));
  });
});

describe('a filter naming an unknown agent', () => {
  it('is NOT_FOUND before the upgrade, as a query filter and as a path', async () => {
    for (const path of ['/api/v1/messages?agent_id=nope', '/api/v1/agents/nope/messages']) {
      const answer = await refused(path);
      assert.equal(answer.status, 404, path);
      assert.equal(answer.body.code, 'NOT_FOUND');
      assert.equal(answer.body.metadata.agent_id, 'nope');
    }
  });

  it('a known agent streams', async () => {
    await closeStream(await opened(`/api/v1/messages?agent_id=${agent}`));
  });
});

describe('a client that goes away', () => {
  it('closing normally: nothing logged at info or above, the subscription released', async () => {
    const ws = await opened('/api/v1/messages');
    assert.equal(subscribers(), baseline + 1);
    await closeStream(ws);
    assert.deepEqual(loud(), []);
  });

  it('reset while frames queue for it: a debug line without a stack, nothing louder, the subscription released', async () => {
    const ws = await opened('/api/v1/messages');
    const socket = (ws as unknown as { _socket: { pause(): void; destroy(): void } })._socket;
    // The client stops reading, so the server's frames back up behind its high-water mark.
    socket.pause();
    for (let i = 0; i < 12; i++) {
      const sent = await call(gw.base, 'POST', '/api/v1/messages', { receiver: agent, message_type: 'inform', content: `${'x'.repeat(500_000)}${i}` });
      assert.equal(sent.status, 202);
    }
    socket.destroy();
    const line = await eventually(() => logs.find((l) => l.msg === 'websocket client disconnected'));
    assert.equal(line.level, 20, 'debug');
    assert.equal(line.err, undefined, 'no error object, so no stack');
    await eventually(() => (subscribers() === baseline ? true : undefined));
    assert.deepEqual(loud(), []);
  });
});
