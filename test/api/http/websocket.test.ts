/** WebSocket streams with real `ws` clients against the real AgentService. */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { WebSocket } from 'ws';
import { createSimulatedClock } from '../../../supervisors/index.js';
import { captureLogger, type LogRecord } from '../../agents/agent-fixtures.js';
import { watFixture } from '../../helpers/wat.js';
import { call, deployEcho, eventually, startGateway, type Gateway } from './http-fixtures.js';

interface Frame {
  message_id: string;
  sender: string;
  receiver: string;
  message_type: string;
  content?: string;
}

interface Stream {
  ws: WebSocket;
  frames: Frame[];
  closed: Promise<{ code: number; reason: string }>;
}

const STREAM_BUFFER = 16;
let gw: Gateway;
let a: string;
let b: string;
/** The gateway's log: a subscriber dropped for being slow is a warn line with the error's metadata. */
const logs: LogRecord[] = [];
before(async () => {
  gw = await startGateway([`--server.stream_buffer_size=${STREAM_BUFFER}`, '--runtime.message_history_size=4'], { log: captureLogger(logs) });
  a = await deployEcho(gw.base, 'ws-a');
  b = await deployEcho(gw.base, 'ws-b');
});
after(() => gw.stop());

function open(path: string, options: ConstructorParameters<typeof WebSocket>[2] = {}): Promise<Stream> {
  const ws = new WebSocket(`ws://${gw.address}${path}`, options);
  const frames: Frame[] = [];
  ws.on('message', (data, binary) => {
    assert.equal(binary, false, 'text frames only');
    frames.push(JSON.parse(String(data)) as Frame);
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })));
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve({ ws, frames, closed }));
    ws.once('error', reject);
  });
}

/** The HTTP answer to an upgrade the server refuses. */
function refused(path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const ws = new WebSocket(`ws://${gw.address}${path}`);
  return new Promise((resolve, reject) => {
    ws.once('open', () => reject(new Error(`upgrade of ${path} accepted`)));
    ws.once('error', () => undefined);
    ws.once('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += String(chunk)));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown> }));
    });
  });
}

/** Bus subscriptions open now: each WebSocket stream holds one. */
function subscribers(): number {
  const host = gw.server.host();
  assert.ok(host, 'the server is running');
  return host.bus.stats().subscribers;
}

function slowConsumers(): number {
  return gw.server.host()?.bus.stats().slowConsumers ?? 0;
}

async function send(receiver: string, type: string, content: string): Promise<string> {
  const answer = await call(gw.base, 'POST', '/api/v1/messages', { receiver, message_type: type, content });
  assert.equal(answer.status, 202, answer.text);
  return answer.body.message_id as string;
}

test('per-agent stream: the messages to and from that agent, each once, as Message JSON', async () => {
  const stream = await open(`/api/v1/agents/${a}/messages`);
  const toA = await send(a, 'request', 'for a');
  await send(b, 'request', 'for b');
  await eventually(() => (stream.frames.length >= 2 ? true : undefined));
  // The bus delivers in order: once a later marker has arrived, nothing else from before it can still come.
  await send(a, 'inform', 'marker');
  await eventually(() => (stream.frames.some((f) => f.content === 'marker') ? true : undefined));
  assert.deepEqual(stream.frames.slice(0, stream.frames.findIndex((f) => f.content === 'marker')).map((f) => [f.sender === a ? 'a' : f.sender, f.receiver === a ? 'a' : f.receiver, f.message_type, f.content]), [
    ['client:anonymous', 'a', 'request', 'for a'],
    ['a', 'client:anonymous', 'inform', 'for a'],
  ]);
  assert.equal(stream.frames[0]?.message_id, toA);
  assert.deepEqual(Object.keys(stream.frames[0]!).sort(), ['content', 'conversation_id', 'created_at', 'message_id', 'message_type', 'metadata', 'receiver', 'sender']);
  stream.ws.close();
  assert.equal((await stream.closed).code, 1005);
});

test('system-wide stream filtered by type, and by agent through the query', async () => {
  const requests = await open('/api/v1/messages?message_types=request,cfp');
  const ofB = await open(`/api/v1/messages?agent_id=${b}&message_types=inform`);
  await send(a, 'request', 'r1');
  await send(b, 'cfp', 'c1');
  await send(a, 'inform', 'i1');
  await eventually(() => (requests.frames.length >= 2 && ofB.frames.length >= 1 ? true : undefined));
  // A marker to b reaches both streams (the request, and b's inform answering it) after anything sent before it.
  await send(b, 'request', 'marker');
  const upToMarker = (frames: Frame[], type: string): Frame[] => frames.slice(0, frames.findIndex((f) => f.content === 'marker' && f.message_type === type));
  await eventually(() => (upToMarker(requests.frames, 'request').length > 0 && upToMarker(ofB.frames, 'inform').length > 0 ? true : undefined));
  assert.deepEqual(upToMarker(requests.frames, 'request').map((f) => f.content), ['r1', 'c1']);
  assert.deepEqual(upToMarker(ofB.frames, 'inform').map((f) => [f.sender, f.message_type, f.content]), [[b, 'inform', 'c1']]);
  requests.ws.close();
  ofB.ws.close();
  await Promise.all([requests.closed, ofB.closed]);
});

test('a closed or cut client releases its bus subscription at once', async () => {
  // Earlier tests' streams may still be closing on the server side.
  await eventually(() => (gw.http.streams === 0 ? true : undefined));
  const base = subscribers();
  for (const ending of ['close', 'terminate'] as const) {
    const stream = await open(`/api/v1/agents/${a}/messages`);
    // The server subscribes before it answers the upgrade, so the client's 'open' comes after.
    assert.equal(subscribers(), base + 1, `subscribed before ${ending}`);
    const endedAt = Date.now();
    stream.ws[ending]();
    await eventually(() => (subscribers() === base ? true : undefined), 1_000).catch(() => {
      assert.fail(`after ${ending}: ${subscribers()} subscribers, ${base} before the stream opened`);
    });
    assert.ok(Date.now() - endedAt < 500, `${ending}: released after ${Date.now() - endedAt} ms`);
    assert.equal((await stream.closed).code, ending === 'close' ? 1005 : 1006);
    await eventually(() => (gw.http.streams === 0 ? true : undefined), 1_000);
  }
});

test('the 101 answer names the stream\'s trace in X-Trace-Id: the client\'s own, echoed, or a new one', async () => {
  const traceOf = (headers: Record<string, string>): Promise<string | undefined> =>
    new Promise((resolve, reject) => {
      const ws = new WebSocket(`ws://${gw.address}/api/v1/messages`, { headers });
      ws.once('upgrade', (res) => resolve(res.headers['x-trace-id'] as string | undefined));
      ws.once('open', () => ws.close());
      ws.once('error', reject);
    });
  assert.equal(await traceOf({ 'X-Trace-Id': 'ws-req-1' }), 'ws-req-1');
  assert.equal(await traceOf({ 'X-Trace-Id': '4BF92F3577B34DA6A3CE929D0E0E4736' }), '4BF92F3577B34DA6A3CE929D0E0E4736');
  assert.match((await traceOf({})) ?? '', /^[0-9a-f]{32}$/);
});

test('a bad filter is an HTTP error before the upgrade', async () => {
  const shout = await refused('/api/v1/messages?message_types=shout');
  assert.equal(shout.status, 400);
  assert.deepEqual([shout.body.code, (shout.body.metadata as Record<string, string>).reason], ['INVALID_ARGUMENT', 'unknown_performative']);
  assert.match(String(shout.body.trace_id), /^[0-9a-f]{32}$/);
  assert.equal((await refused('/api/v1/messages?colour=red')).status, 400);
  assert.equal((await refused(`/api/v1/agents/${a}/messages?agent_id=${b}`)).status, 400);
  assert.equal((await refused('/api/v1/agents/01J00000000000000000000000/messages')).status, 404);
  assert.equal((await refused('/api/v1/agents')).status, 404);
});

test('pings keep a live client; a client that stops answering pings is cut (on the injected clock)', async () => {
  const clock = createSimulatedClock();
  const quick = await startGateway(['--server.keepalive_timeout=200ms'], { clock });
  try {
    const live = new WebSocket(`ws://${quick.address}/api/v1/messages`);
    let pings = 0;
    live.on('ping', () => pings++);
    await new Promise((resolve) => live.once('open', resolve));
    const mute = new WebSocket(`ws://${quick.address}/api/v1/messages`, { autoPong: false });
    const muteClosed = new Promise<number>((resolve) => mute.on('close', (code) => resolve(code)));
    await new Promise((resolve) => mute.once('open', resolve));
    /** Resolves once the server has read everything `ws` sent before: the answer to a ping of ours comes after it. */
    const roundTrip = (ws: WebSocket): Promise<void> => new Promise((resolve) => (ws.once('pong', () => resolve()), ws.ping()));

    // First ping (half the keepalive timeout): both asked; the live client answers, the mute one does not.
    await clock.advance(100);
    await eventually(() => (pings === 1 ? true : undefined));
    await roundTrip(live);
    assert.equal(mute.readyState, WebSocket.OPEN, 'one missed ping is not yet a cut');
    // Second ping: the mute client never answered the first, so it is cut without a close frame.
    await clock.advance(100);
    assert.equal(await muteClosed, 1006, 'cut without a close frame');
    await eventually(() => (pings === 2 ? true : undefined));
    await roundTrip(live);
    await clock.advance(100);
    await eventually(() => (pings === 3 ? true : undefined));
    assert.equal(live.readyState, WebSocket.OPEN);
    assert.equal(quick.http.streams, 1);
    live.close();
  } finally {
    await quick.stop();
  }
});

test('a client that stops reading is dropped for slow_consumer after a bounded backlog; the sends never wait for it', async () => {
  await eventually(() => (gw.http.streams === 0 ? true : undefined));
  const baseSubscribers = subscribers();
  const baseSlow = slowConsumers();
  const logged = logs.length;
  // An agent that never reads its messages: the frames are the sends alone, of any size, and no agent's
  // memory is part of the test.
  const deployed = await call(gw.base, 'POST', '/api/v1/agents', { name: 'ws-sink', wasm_module: Buffer.from(await watFixture('valid/minimal.wat')).toString('base64') });
  assert.equal(deployed.status, 201, deployed.text);
  const sink = deployed.body.agent_id as string;
  const slow = await open('/api/v1/messages');
  slow.ws.pause();
  const content = 'x'.repeat(256 * 1024);
  const sent = 300;
  for (let i = 0; i < sent; i++) await send(sink, 'inform', content);
  await eventually(() => (gw.http.streams === 0 ? true : undefined), 10_000);
  // The cause, established on the server while the client still reads nothing: the bus dropped the
  // stream's sink for falling behind, which released its subscription, and the gateway said why.
  assert.equal(slowConsumers(), baseSlow + 1, 'the bus dropped one slow consumer');
  assert.equal(subscribers(), baseSubscribers, 'its subscription is released');
  const drops = logs.slice(logged).filter((r) => r.msg === 'websocket subscriber dropped');
  assert.equal(drops.length, 1, `log: ${JSON.stringify(logs.slice(logged).map((r) => r.msg))}`);
  const { metadata, trace_id } = drops[0] as { metadata?: Record<string, string>; trace_id?: string };
  assert.equal(metadata?.reason, 'slow_consumer');
  assert.equal(metadata?.buffer_size, String(STREAM_BUFFER));
  assert.equal(metadata?.dropped, String(STREAM_BUFFER + 1));
  assert.match(String(trace_id), /^[0-9a-f]{32}$/);
  slow.ws.resume();
  const { code, reason } = await slow.closed;
  // The close frame queues behind the unread backlog and the socket is cut after a grace period, so 1006 is as valid as 1008.
  assert.ok(code === 1008 || code === 1006, `close ${code} ${reason}`);
  if (code === 1008) assert.equal(reason, 'RESOURCE_EXHAUSTED: slow_consumer');
  // Socket buffers of both kernels, the high-water mark and the 16 events of the sink; everything else was never buffered.
  assert.ok(slow.frames.length < 100, `received ${slow.frames.length} of ${sent}`);
  const health = await call(gw.base, 'GET', '/api/v1/health');
  assert.equal(health.status, 200);
});

test('a stream outlives request_timeout; while draining, upgrades are refused with 503', async () => {
  const own = await startGateway(['--server.request_timeout=300ms', '--server.connection_timeout=200ms']);
  try {
    const ws = new WebSocket(`ws://${own.address}/api/v1/messages`);
    await new Promise((resolve) => ws.once('open', resolve));
    // Node's header timer cuts a connection whose headers stop halfway after connection_timeout (200 ms); two of
    // them, one after the other, span more than request_timeout (300 ms) since the stream opened, on the server's own timers.
    for (let i = 0; i < 2; i++) {
      const stalled = connect(Number(own.address.slice(own.address.lastIndexOf(':') + 1)), '127.0.0.1');
      stalled.on('error', () => undefined).resume();
      stalled.write('GET /health HTTP/1.1\r\nHost: x\r\n');
      await new Promise((resolve) => stalled.once('close', resolve));
    }
    assert.equal(ws.readyState, WebSocket.OPEN);
    own.http.drain();
    const refusal = await new Promise<number>((resolve) => {
      const late = new WebSocket(`ws://${own.address}/api/v1/messages`);
      late.once('error', () => undefined);
      late.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    });
    assert.equal(refusal, 503);
    assert.equal(ws.readyState, WebSocket.OPEN, 'draining keeps open streams');
  } finally {
    await own.stop();
  }
});

test('stop() closes open streams with 1001', async () => {
  const own = await startGateway();
  const stream = await new Promise<Stream>((resolve, reject) => {
    const ws = new WebSocket(`ws://${own.address}/api/v1/messages`);
    const closed = new Promise<{ code: number; reason: string }>((r) => ws.on('close', (code, reason) => r({ code, reason: String(reason) })));
    ws.once('open', () => resolve({ ws, frames: [], closed }));
    ws.once('error', reject);
  });
  await own.stop();
  assert.deepEqual(await stream.closed, { code: 1001, reason: 'server shutting down' });
});
