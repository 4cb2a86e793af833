/**
 * SubscribeMessages over real gRPC: filters by agent and by type, JSON
 * content as text, invalid filters, cancellation and disconnection releasing
 * the bus subscription at once, a slow reader dropped with slow_consumer,
 * and streams ended with UNAVAILABLE when the server stops.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { status, type ClientReadableStream, type ServiceError } from '@grpc/grpc-js';
import { remoteError } from '../../../src/api/grpc/grpc-client.js';
import type { ProtoMessage } from '../../../src/api/grpc/grpc-translate.js';
import { example, waitFor } from '../../agents/agent-fixtures.js';
import { wat } from '../../helpers/wat.js';
import { SVC_COMMAND } from '../../helpers/svc-command.js';
import { assertError, startGrpcTestServer, SUITE_TIMEOUT, type GrpcTestServer } from './grpc-harness.js';


/** Replies `inform` whose content is a JSON object, not a string. */
const OBJECT_REPLY = '{"message_type":"inform","content":{"n":1,"ok":true}}\n';
const OBJECT_AGENT = `(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1 1)
  (data (i32.const 64) ${JSON.stringify(OBJECT_REPLY)})
  (func (export "handle")
    (i32.store (i32.const 16) (i32.const 64))
    (i32.store (i32.const 20) (i32.const ${Buffer.byteLength(OBJECT_REPLY)}))
    (drop (call $fd_write (i32.const 1) (i32.const 16) (i32.const 1) (i32.const 24)))))`;

interface Collected {
  stream: ClientReadableStream<ProtoMessage>;
  messages: ProtoMessage[];
  ended: Promise<ServiceError | undefined>;
}

/** Subscribes and resolves once the server confirmed the subscription (response headers). */
async function collect(s: GrpcTestServer, filter: { agent_id?: string; message_types?: string[] }, client = s.client): Promise<Collected> {
  const stream = client.subscribe(filter);
  const messages: ProtoMessage[] = [];
  stream.on('data', (m: ProtoMessage) => messages.push(m));
  const ended = new Promise<ServiceError | undefined>((resolve) => {
    stream.on('error', resolve);
    stream.on('end', () => resolve(undefined));
  });
  await Promise.race([new Promise((resolve) => stream.once('metadata', resolve)), ended]);
  return { stream, messages, ended };
}

describe('SubscribeMessages', SUITE_TIMEOUT, () => {
  let s: GrpcTestServer;
  let a: string;
  let b: string;
  before(async () => {
    s = await startGrpcTestServer();
    a = (await s.client.deploy({ name: 'stream-a', wasm_module: example('echo') })).agent_id;
    b = (await s.client.deploy({ name: 'stream-b', wasm_module: example('echo') })).agent_id;
  });
  after(() => s.stop());

  /** Sends a request to `a` and to `b`, and waits until `probe` saw both echo replies. */
  async function traffic(probe: Collected): Promise<void> {
    const toA = await s.client.send({ receiver: a, message_type: 'request', content: 'for a' });
    const toB = await s.client.send({ receiver: b, message_type: 'request', content: 'for b' });
    await waitFor(() => [toA, toB].every(({ message_id }) => probe.messages.some((m) => m.in_reply_to === message_id)), 'both replies');
  }

  it('streams each message once, filtered by agent (sender or receiver)', async () => {
    const all = await collect(s, {});
    const onlyA = await collect(s, { agent_id: a });
    await traffic(all);
    await waitFor(() => onlyA.messages.length >= 2, 'the messages of a');
    assert.deepEqual(onlyA.messages.map((m) => [m.sender, m.receiver, m.message_type]), [
      ['client:anonymous', a, 'request'],
      [a, 'client:anonymous', 'inform'],
    ]);
    const ids = all.messages.map((m) => m.message_id);
    assert.equal(new Set(ids).size, ids.length, 'no message twice');
    assert.equal(all.messages.length, 4);
    all.stream.cancel();
    onlyA.stream.cancel();
  });

  it('filters by type', async () => {
    const all = await collect(s, {});
    const informs = await collect(s, { message_types: ['inform'] });
    await traffic(all);
    await waitFor(() => informs.messages.length >= 2, 'two informs');
    assert.ok(informs.messages.every((m) => m.message_type === 'inform'));
    assert.deepEqual(informs.messages.map((m) => m.sender).sort(), [a, b].sort());
    all.stream.cancel();
    informs.stream.cancel();
  });

  it('filters by agent and type together', async () => {
    const all = await collect(s, {});
    const probe = await collect(s, { agent_id: b, message_types: ['request', 'cfp'] });
    await traffic(all);
    await waitFor(() => probe.messages.length >= 1, 'the request to b');
    assert.deepEqual(probe.messages.map((m) => [m.receiver, m.message_type, m.content]), [[b, 'request', 'for b']]);
    all.stream.cancel();
    probe.stream.cancel();
  });

  it('carries JSON content as its JSON text', async () => {
    const { agent_id } = await s.client.deploy({ name: 'object-replier', wasm_module: await wat(OBJECT_AGENT) });
    const probe = await collect(s, { agent_id, message_types: ['inform'] });
    await s.client.send({ receiver: agent_id, message_type: 'request', content: 'x' });
    await waitFor(() => probe.messages.length >= 1, 'the object reply');
    assert.deepEqual(JSON.parse(probe.messages[0]?.content ?? ''), { n: 1, ok: true });
    probe.stream.cancel();
    await s.client.undeploy(agent_id);
  });

  it('refuses an invalid filter with INVALID_ARGUMENT and the trailer', async () => {
    const probe = await collect(s, { message_types: ['shout'] });
    const error = await probe.ended;
    assert.ok(error);
    assertError(remoteError(error), 'INVALID_ARGUMENT', status.INVALID_ARGUMENT, { reason: 'unknown_performative', value: 'shout' });
  });

  it('a cancelled call releases its subscription at once', async () => {
    const base = s.subscribers();
    const probe = await collect(s, { agent_id: a });
    assert.equal(s.subscribers(), base + 1);
    const cancelledAt = Date.now();
    probe.stream.cancel();
    await waitFor(() => s.subscribers() === base, 'the subscription to be released', 1_000);
    assert.ok(Date.now() - cancelledAt < 500, `released after ${Date.now() - cancelledAt} ms`);
    assert.equal(s.grpc.stats().streams, 0);
    assert.equal((await probe.ended)?.code, status.CANCELLED);
  });

  it('a client process that dies releases its subscription', async () => {
    const base = s.subscribers();
    const child = spawn(process.execPath, [...SVC_COMMAND, 'messages', 'tail', '--server', s.address], { stdio: ['ignore', 'ignore', 'pipe'] });
    await new Promise<void>((resolve, reject) => {
      child.stderr.on('data', (chunk: Buffer) => chunk.toString().includes('following') && resolve());
      child.once('exit', (code, signal) => reject(new Error(`svc messages tail exited (${signal ?? code}) before it followed`)));
    });
    assert.equal(s.subscribers(), base + 1);
    child.kill('SIGKILL');
    await waitFor(() => s.subscribers() === base, 'the subscription to be released', 2_000);
  });
});

describe('SubscribeMessages to a slow reader', SUITE_TIMEOUT, () => {
  const BUFFER = 4;
  let s: GrpcTestServer;
  let a: string;
  before(async () => {
    s = await startGrpcTestServer({ 'server.stream_buffer_size': BUFFER });
    a = (await s.client.deploy({ name: 'slow-target', wasm_module: example('echo') })).agent_id;
  });
  after(() => s.stop());

  it('drops a reader that stops reading with slow_consumer, so memory stays bounded', async () => {
    const probe = await collect(s, { agent_id: a });
    probe.stream.pause();
    // Large contents fill the HTTP/2 windows quickly; past them the server queues at most stream_buffer_size.
    const content = 'x'.repeat(256 * 1024);
    let sent = 0;
    while (!probe.stream.destroyed && sent < 200 && s.grpc.stats().streams > 0) {
      await s.client.send({ receiver: a, message_type: 'inform', content }).catch(() => undefined);
      sent++;
    }
    probe.stream.resume();
    const error = await probe.ended;
    assert.ok(error, `still streaming after ${sent} messages`);
    assertError(remoteError(error), 'RESOURCE_EXHAUSTED', status.RESOURCE_EXHAUSTED, { reason: 'slow_consumer' });
    // The stream of an agent also carries the platform's messages about it (the echo crashes on 256 KiB): only the sends count.
    const arrived = probe.messages.filter((m) => m.sender !== 'platform').length;
    assert.ok(arrived < sent, `${arrived} of ${sent} arrived: the rest were dropped, not buffered`);
  });
});

describe('SubscribeMessages at shutdown', SUITE_TIMEOUT, () => {
  it('ends open streams with UNAVAILABLE (draining) and the trailer', async () => {
    const s = await startGrpcTestServer();
    const probe = await collect(s, {});
    const stopping = s.grpc.stop(1_000);
    const error = await probe.ended;
    assert.ok(error);
    assertError(remoteError(error), 'UNAVAILABLE', status.UNAVAILABLE, { reason: 'draining' });
    await stopping;
    await s.stop();
  });
});
