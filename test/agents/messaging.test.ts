/**
 * Messages between real agents and clients: the ping/pong game of the
 * examples, replies and their defaults, subscription filters, a slow
 * subscriber dropped, FIPA failures for what cannot be delivered, full
 * mailboxes, and the per-agent history.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createSimulatedClock } from '../../supervisors/index.js';
import type { BusEvent } from '../../src/bus/events.js';
import { isSvcError } from '../../src/errors/svc-error.js';
import { OBLIGING, burner, compile } from './agent-wat.js';
import { CLIENT, TEST_TIMEOUT_MS, ask, ctx, deploy, deliveredTo, example, messages, startTestServer, until, waitForState } from './agent-fixtures.js';

const isCode = (code: string, reason?: string) => (error: unknown) =>
  isSvcError(error) && error.code === code && (reason === undefined || error.metadata['reason'] === reason);

describe('messaging', { timeout: TEST_TIMEOUT_MS }, () => {
  it('ping and pong play a game of five rounds through the bus', async () => {
    const t = await startTestServer({ clock: createSimulatedClock() });
    try {
      const events = t.events();
      const pong = await deploy(t, example('pong'), 'pong');
      const ping = await deploy(t, example('ping'), 'ping');
      await t.service.send({ receiver: ping, message_type: 'request', content: `start:${pong}:5` }, ctx);
      await until(() => t.logs.some((l) => l.msg === 'agent log' && l.agent_id === ping && String(l.line).startsWith('ping: done, 5 pongs')), 'the end of the game');
      const pings = deliveredTo(events, pong);
      const pongs = deliveredTo(events, ping).filter((m) => m.sender === pong);
      assert.equal(pings.length, 5);
      assert.equal(pongs.length, 5);
      assert.ok(pings.every((m) => m.message_type === 'request' && m.content === 'ping' && m.sender === ping));
      assert.ok(pongs.every((m) => m.message_type === 'inform' && m.content === 'pong'));
      const conversation = pings[0]!.conversation_id;
      assert.match(conversation, /^ping-/);
      assert.ok([...pings, ...pongs].every((m) => m.conversation_id === conversation));
      assert.deepEqual(pongs.map((m) => m.in_reply_to), pings.map((m) => m.message_id), 'each pong replies to its ping');
      const [pingAgent, pongAgent] = [await t.service.get(ping, ctx), await t.service.get(pong, ctx)];
      assert.deepEqual([pingAgent.messages_received, pingAgent.messages_sent], [6, 5]);
      assert.deepEqual([pongAgent.messages_received, pongAgent.messages_sent], [5, 5]);
    } finally {
      await t.stop();
    }
  });

  it('a reply goes to the sender, in its conversation, in reply to its reply_with or message_id', async () => {
    const t = await startTestServer({ clock: createSimulatedClock() });
    try {
      const events = t.events();
      const echo = await deploy(t, example('echo'), 'echo');
      const sent = await t.service.send({ receiver: echo, message_type: 'query-ref', content: 'hi', conversation_id: 'conv-1', reply_with: 'q-1' }, ctx);
      const reply = await until(() => deliveredTo(events, CLIENT)[0], 'the reply');
      assert.deepEqual([reply.sender, reply.receiver, reply.message_type, reply.content], [echo, CLIENT, 'inform', 'hi']);
      assert.deepEqual([reply.conversation_id, reply.in_reply_to], ['conv-1', 'q-1']);
      // Each message is seen sent, then delivered.
      const request = messages(events).filter((m) => m.message_id === sent.message_id);
      assert.equal(request.length, 2);
      const directions = events.filter((e) => e.kind === 'message' && e.message.message_id === sent.message_id).map((e) => (e.kind === 'message' ? e.direction : ''));
      assert.deepEqual(directions, ['sent', 'delivered']);
      await assert.rejects(t.service.send({ receiver: echo, message_type: 'shout' }, ctx), isCode('INVALID_ARGUMENT', 'unknown_performative'));
      await assert.rejects(t.service.send({ receiver: 'no-such-agent', message_type: 'inform' }, ctx), isCode('NOT_FOUND', 'unknown_receiver'));
      const viaPath = await t.service.send({ message_type: 'inform', content: 'by path' }, ctx, echo);
      assert.ok(viaPath.message_id);
    } finally {
      await t.stop();
    }
  });

  it('subscriptions see what their filter matches, and refuse an invalid filter', async () => {
    const t = await startTestServer({ clock: createSimulatedClock() });
    try {
      const all = t.events();
      const [a, b] = [await deploy(t, example('echo'), 'a'), await deploy(t, example('echo'), 'b')];
      const ofA: BusEvent[] = [];
      const informs: BusEvent[] = [];
      const sinks = [t.service.subscribe({ agent_id: a }, (e) => void ofA.push(e), ctx), t.service.subscribe({ messageTypes: ['inform'] }, (e) => void informs.push(e), ctx)];
      await ask(t, all, a, 'to a');
      await ask(t, all, b, 'to b');
      assert.ok(ofA.length > 0);
      assert.ok(ofA.every((e) => (e.kind === 'message' ? e.message.sender === a || e.message.receiver === a : e.agent_id === a)));
      assert.ok(informs.length > 0);
      assert.ok(informs.every((e) => e.kind === 'message' && e.message.message_type === 'inform'));
      assert.ok(informs.some((e) => e.kind === 'message' && e.message.sender === b), 'both agents replies');
      for (const sink of sinks) sink.close();
      assert.throws(() => t.service.subscribe({ message_types: ['shout'] }, () => undefined, ctx), isCode('INVALID_ARGUMENT', 'unknown_performative'));
      assert.throws(() => t.service.subscribe({ colour: 'red' }, () => undefined, ctx), isCode('INVALID_ARGUMENT', 'unknown_field'));
    } finally {
      await t.stop();
    }
  });

  it('a subscriber that falls more than stream_buffer_size events behind is dropped', async () => {
    const t = await startTestServer({ clock: createSimulatedClock(), overrides: { 'server.stream_buffer_size': 4 } });
    try {
      const events = t.events();
      const echo = await deploy(t, example('echo'), 'echo');
      const stalled = t.service.subscribe({}, () => new Promise(() => undefined), ctx);
      for (let i = 0; i < 5; i++) await ask(t, events, echo, `m${i}`);
      await assert.rejects(stalled.done, isCode('RESOURCE_EXHAUSTED', 'slow_consumer'));
      assert.equal(stalled.closed, true);
      assert.equal(t.host().bus.stats().slowConsumers, 1);
    } finally {
      await t.stop();
    }
  });

  it('what cannot be delivered comes back to its sender as a FIPA failure', async () => {
    const t = await startTestServer({ clock: createSimulatedClock() });
    try {
      const events = t.events();
      const ping = await deploy(t, example('ping'), 'ping');
      await t.service.send({ receiver: ping, message_type: 'request', content: 'start:nobody-here:1' }, ctx);
      const failure = await until(() => deliveredTo(events, ping).find((m) => m.message_type === 'failure'), 'the failure to ping');
      assert.equal(failure.sender, 'platform');
      assert.equal(failure.metadata['failure_reason'], 'unknown_receiver');
      assert.match(failure.conversation_id, /^ping-/, 'in the conversation of the message that failed');
      const request = messages(events, 'platform').find((m) => m.message_id === failure.message_id);
      assert.ok(request, 'published on the bus as a platform message');
      assert.equal(t.host().bus.stats().failures.unknown_receiver, 1);
      const { samples } = await t.service.metrics(ctx);
      assert.equal(samples.find((s) => s.name === 'svc_message_errors_total' && s.labels['message_type'] === 'request')?.value, 1);
    } finally {
      await t.stop();
    }
  });

  it('a reply to a platform failure is dropped, not answered with another failure (no failure storm)', async () => {
    const t = await startTestServer({ clock: createSimulatedClock() });
    try {
      const events = t.events();
      const obliging = await deploy(t, await compile(OBLIGING), 'obliging');
      await ask(t, events, obliging, 'first');
      const failure = await until(() => deliveredTo(events, obliging).find((m) => m.sender === 'platform'), 'the failure for nobody');
      // Handled after the failure, which the agent answers too: that inform to `platform` reaches nobody and is
      // counted, but brings no failure back.
      assert.equal((await ask(t, events, obliging, 'second')).content, 'ok');
      assert.equal(t.host().bus.stats().failures.unknown_receiver, 2, 'the request to nobody, and the reply to the failure');
      assert.equal(t.host().bus.stats().failureReplies, 1, 'one failure, for the request to nobody');
      assert.equal((await t.service.get(obliging, ctx)).messages_received, 3, 'two requests and one failure');
      assert.equal(deliveredTo(events, obliging).filter((m) => m.message_type === 'failure').length, 1);
      assert.equal(failure.metadata['failure_reason'], 'unknown_receiver');
    } finally {
      await t.stop();
    }
  });

  it('a full mailbox refuses a client with RESOURCE_EXHAUSTED and answers an agent with a failure', async () => {
    const t = await startTestServer({ clock: createSimulatedClock(), overrides: { 'runtime.mailbox_size': 2 } });
    try {
      const events = t.events();
      const busy = await deploy(t, await compile(burner(100_000_000)), 'busy');
      const ping = await deploy(t, example('ping'), 'ping');
      await t.service.send({ receiver: busy, message_type: 'request', content: 'first' }, ctx);
      await waitForState(t, busy, 'executing');
      await t.service.send({ receiver: busy, message_type: 'request', content: 'queued 1' }, ctx);
      await t.service.send({ receiver: busy, message_type: 'request', content: 'queued 2' }, ctx);
      await assert.rejects(t.service.send({ receiver: busy, message_type: 'request', content: 'one too many' }, ctx), isCode('RESOURCE_EXHAUSTED', 'mailbox_full'));
      await t.service.send({ receiver: ping, message_type: 'request', content: `start:${busy}:1` }, ctx);
      const failure = await until(() => deliveredTo(events, ping).find((m) => m.message_type === 'failure'), 'the failure to ping');
      assert.equal(failure.metadata['failure_reason'], 'mailbox_full');
      await until(() => deliveredTo(events, CLIENT).filter((m) => m.sender === busy).length === 3, 'the three accepted messages handled');
      assert.equal(t.host().bus.stats().failures.mailbox_full, 1, 'the agent sender');
      const { samples } = await t.service.metrics(ctx);
      assert.equal(samples.find((s) => s.name === 'svc_message_errors_total' && s.labels['message_type'] === 'request')?.value, 2, 'the client and the agent');
    } finally {
      await t.stop();
    }
  });

  it('a mailbox full by bytes refuses a client (mailbox_full), the bytes of all mailboxes past max_queued_bytes refuse with memory_pressure, and nothing accepted is lost (issue 41)', async () => {
    const t = await startTestServer({
      clock: createSimulatedClock(),
      overrides: { 'runtime.mailbox_bytes': 4_000, 'runtime.max_queued_bytes': 5_200 },
    });
    try {
      const events = t.events();
      const busy = await deploy(t, await compile(burner(100_000_000)), 'busy');
      const other = await deploy(t, await compile(burner(100_000_000)), 'other');
      const kib = 'x'.repeat(1_024);
      const send = (receiver: string) => t.service.send({ receiver, message_type: 'request', content: kib }, ctx);
      await send(busy);
      await send(other);
      await waitForState(t, busy, 'executing');
      await waitForState(t, other, 'executing');
      // About 1.6 KB each as counted: two wait in a 4,000-byte mailbox, the third does not fit.
      await send(busy);
      await send(busy);
      await assert.rejects(send(busy), isCode('RESOURCE_EXHAUSTED', 'mailbox_full'));
      // The other mailbox has room, but all mailboxes together would pass 5,200 bytes with its second.
      // (An agent sender's refusal takes the same path as mailbox_full's above: a FIPA failure.)
      await send(other);
      await assert.rejects(send(other), isCode('RESOURCE_EXHAUSTED', 'memory_pressure'));
      assert.ok(t.host().queuedBytes() <= 5_200);
      await until(() => deliveredTo(events, CLIENT).filter((m) => m.sender === busy).length === 3, 'the three messages busy accepted handled');
      await until(() => deliveredTo(events, CLIENT).filter((m) => m.sender === other).length === 2, 'the two messages other accepted handled');
      assert.equal(t.host().queuedBytes(), 0);
    } finally {
      await t.stop();
    }
  });

  it('keeps each agent recent messages, newest last', async () => {
    const t = await startTestServer({ clock: createSimulatedClock(), overrides: { 'runtime.message_history_size': 3 } });
    try {
      const events = t.events();
      const echo = await deploy(t, example('echo'), 'echo');
      for (const word of ['one', 'two', 'three']) await ask(t, events, echo, word);
      const recent = await t.service.recentMessages(echo, ctx);
      assert.deepEqual(recent.map((m) => `${m.sender === echo ? 'out' : 'in'}:${String(m.content)}`), ['out:two', 'in:three', 'out:three']);
      assert.equal((await t.service.recentMessages(echo, ctx, 1))[0]?.content, 'three');
      await assert.rejects(t.service.recentMessages('nobody', ctx), isCode('NOT_FOUND'));
      await assert.rejects(t.service.recentMessages(echo, ctx, 0), isCode('INVALID_ARGUMENT'));
    } finally {
      await t.stop();
    }
  });
});
