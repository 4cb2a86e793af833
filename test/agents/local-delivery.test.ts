/**
 * Worker-local delivery on a real server with one executor worker, so every
 * agent shares it: messages between agents run inside the worker, and each
 * hop is still counted, kept in history, published to subscribers in order;
 * a crash in the middle of a local chain fails the message to its sender and
 * restarts the agent as before; a send a capability refuses is refused as
 * before while the local conversations go on.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { MessageEvent } from '../../src/bus/events.js';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { SPANS } from '../../src/telemetry/span-names.js';
import { memoryTracing } from '../telemetry/telemetry-fixtures.js';
import { CLIENT, TEST_TIMEOUT_MS, ctx, deploy, example, messages, startTestServer, transitions, until, type TestServer } from './agent-fixtures.js';
import { compile, crashingAt } from './agent-wat.js';

const ONE_WORKER = { 'runtime.executor_workers': 1, 'runtime.isolated_workers': 0 };

/** The messages of `events` between `a` and `b`, in `direction`, in the order they were published. */
function between(events: Parameters<typeof messages>[0], direction: MessageEvent['direction'], a: string, b: string): MessageEvent['message'][] {
  return messages(events, direction).filter((m) => (m.sender === a && m.receiver === b) || (m.sender === b && m.receiver === a));
}

const localHops = (t: TestServer): number => t.server.host()!.pool.stats().localHops;

describe('worker-local delivery', { timeout: TEST_TIMEOUT_MS }, () => {
  it('a ping-pong chain inside one worker: every hop counted, in history and seen by a subscriber, in order', async () => {
    const t = await startTestServer({ overrides: ONE_WORKER });
    try {
      const ping = await deploy(t, example('ping'), 'ping');
      const pong = await deploy(t, example('pong'), 'pong');
      const watched: MessageEvent['message'][] = [];
      const sink = t.service.subscribe({ agent_id: pong }, (event) => void (event.kind === 'message' && event.direction === 'delivered' && watched.push(event.message)), ctx);
      const events = t.events();
      const rounds = 40;
      await t.service.send({ receiver: ping, message_type: 'request', content: `start:${pong}:${rounds}` }, ctx);
      const host = t.server.host()!;
      await until(() => host.get(ping)!.messagesReceived === rounds + 1 && host.get(pong)!.inFlight === undefined, 'the last pong');
      assert.ok(localHops(t) > 0, 'some hops ran inside the worker');
      assert.equal(host.get(pong)!.messagesReceived, rounds);
      assert.equal(host.get(pong)!.messagesSent, rounds);
      assert.equal(host.get(ping)!.messagesSent, rounds);
      const sent = between(events, 'sent', ping, pong);
      const delivered = between(events, 'delivered', ping, pong);
      assert.equal(sent.length, 2 * rounds);
      assert.deepEqual(delivered.map((m) => m.message_id), sent.map((m) => m.message_id), 'delivered in the order sent');
      assert.deepEqual(
        delivered.map((m) => m.content),
        Array.from({ length: 2 * rounds }, (_, i) => (i % 2 === 0 ? 'ping' : 'pong')),
      );
      for (let i = 1; i < delivered.length; i++) assert.equal(delivered[i]!.in_reply_to, delivered[i - 1]!.message_id, `hop ${i} answers hop ${i - 1}`);
      await until(() => watched.length === 2 * rounds, 'the subscriber saw every hop of pong');
      assert.deepEqual(watched.map((m) => m.message_id), delivered.map((m) => m.message_id));
      const history = await t.service.recentMessages(pong, ctx, 2 * rounds);
      assert.deepEqual(new Set(history.map((m) => m.message_id)), new Set(sent.map((m) => m.message_id)), 'pong keeps every hop in its history');
      assert.equal((await t.service.get(pong, ctx)).messages_received, rounds);
      sink.close();
    } finally {
      await t.stop();
    }
  });

  it('a crash in the middle of a local chain fails the message to its sender and restarts the agent', async () => {
    const t = await startTestServer({ overrides: ONE_WORKER });
    try {
      const relay = await deploy(t, example('relay'), 'relay');
      const fragile = await deploy(t, await compile(crashingAt(3)), 'fragile');
      const events = t.events();
      await t.service.send({ receiver: relay, message_type: 'request', content: `relay:${fragile}` }, ctx);
      const failure = await until(() => messages(events, 'platform').find((m) => m.receiver === relay && m.message_type === 'failure'), 'the failure to the relay');
      assert.equal(failure.metadata['failure_reason'], 'execution_crashed');
      const toFragile = between(events, 'delivered', relay, fragile).filter((m) => m.receiver === fragile);
      assert.equal(toFragile.length, 3, 'the fragile agent handled two messages and crashed on the third');
      assert.equal(failure.in_reply_to, toFragile[2]!.message_id, 'the failure names the message it crashed on');
      await until(() => transitions(events, fragile).some((e) => e.to === 'restarting'), 'the restart');
      await until(() => t.server.host()!.get(fragile)!.state === 'running', 'running again');
      assert.ok(localHops(t) > 0, 'the chain ran inside the worker');
      assert.equal(t.server.host()!.get(fragile)!.messagesReceived, 3);
      const history = await t.service.recentMessages(relay, ctx);
      assert.ok(history.some((m) => m.message_id === failure.message_id), 'the failure is in the relay\'s history');
      // The agent works again, from the main thread as from the worker.
      const { message_id } = await t.service.send({ receiver: fragile, message_type: 'request', content: 'again' }, ctx);
      await until(() => messages(events, 'delivered').find((m) => m.receiver === CLIENT && m.in_reply_to === message_id), 'its answer');
    } finally {
      await t.stop();
    }
  });

  it('messages of sampled traces take the main thread, with their spans; unsampled ones stay in the worker', async () => {
    for (const rate of [1, 0]) {
      const { tracing, spans, spansUntil } = memoryTracing({ trace_sample_rate: rate, message_trace_sample_rate: rate });
      const t = await startTestServer({ overrides: ONE_WORKER, tracing });
      try {
        const ping = await deploy(t, example('ping'), 'ping');
        const pong = await deploy(t, example('pong'), 'pong');
        const rounds = 20;
        await t.service.send({ receiver: ping, message_type: 'request', content: `start:${pong}:${rounds}` }, ctx);
        const host = t.server.host()!;
        await until(() => host.get(ping)!.messagesReceived === rounds + 1 && host.get(pong)!.inFlight === undefined, 'the last pong');
        const executionsOf = (finished: readonly ReadableSpan[]) => finished.filter((s) => s.name === SPANS.agentExecute);
        if (rate === 1) {
          assert.equal(localHops(t), 0, 'every message of a sampled trace went through the main thread');
          await spansUntil((finished) => executionsOf(finished).length === 2 * rounds + 1, 'one span per execution');
        } else {
          const executions = executionsOf(await spans());
          assert.ok(localHops(t) > 0, 'unsampled messages stayed in the worker');
          assert.equal(executions.length, 0);
        }
      } finally {
        await t.stop();
      }
    }
  });

  it('two agents that talk across workers are moved together, their state kept, and their messages go on inside one worker', async () => {
    const t = await startTestServer({ overrides: { 'runtime.executor_workers': 2, 'runtime.isolated_workers': 0 } });
    try {
      const host = t.server.host()!;
      const ping = await deploy(t, example('ping'), 'ping');
      const pong = await deploy(t, example('pong'), 'pong');
      const workerOf = (id: string) => host.pool.placementOf(host.get(id)!.instance ?? host.get(id)!.held!)?.workerId;
      assert.notEqual(workerOf(ping), workerOf(pong), 'placement spread them');
      const events = t.events();
      const rounds = 300;
      await t.service.send({ receiver: ping, message_type: 'request', content: `start:${pong}:${rounds}` }, ctx);
      await until(() => host.get(ping)!.messagesReceived === rounds + 1 && host.get(pong)!.inFlight === undefined, 'the last pong');
      assert.equal(host.stats().moves, 1, 'one of them moved');
      assert.equal(workerOf(ping), workerOf(pong), 'both on one worker');
      assert.ok(localHops(t) > 0, 'then talking inside it');
      // The game's state moved with the agent: every round was played, and the game ended with its last pong.
      assert.equal(host.get(pong)!.messagesReceived, rounds);
      assert.equal(between(events, 'delivered', ping, pong).length, 2 * rounds);
      assert.equal(messages(events, 'platform').length, 0, 'no failure on the way');
    } finally {
      await t.stop();
    }
  });

  it('a send to an agent without message:receive is refused (permission_denied) while a local conversation goes on', async () => {
    const t = await startTestServer({ overrides: ONE_WORKER });
    try {
      const a = await deploy(t, example('relay'), 'a');
      const b = await deploy(t, example('relay'), 'b');
      const sender = await deploy(t, example('relay'), 'sender');
      const { agent_id: deaf } = await t.service.deploy({ name: 'deaf', wasm_module: example('echo'), capabilities: ['message:send'], resources: { memory_limit: 0, cpu_shares: 0 } }, ctx);
      const events = t.events();
      await t.service.send({ receiver: a, message_type: 'request', content: `relay:${b}` }, ctx);
      const host = t.server.host()!;
      await until(() => host.get(b)!.messagesReceived > 50, 'the relay pair under way');
      await t.service.send({ receiver: sender, message_type: 'request', content: `relay:${deaf}` }, ctx);
      const failure = await until(() => messages(events, 'platform').find((m) => m.receiver === sender && m.message_type === 'failure'), 'the refusal');
      assert.equal(failure.metadata['failure_reason'], 'permission_denied');
      assert.equal(messages(events, 'delivered').filter((m) => m.receiver === deaf).length, 0, 'nothing reached the deaf agent');
      const before = host.get(b)!.messagesReceived;
      await until(() => host.get(b)!.messagesReceived > before + 50, 'the pair still relaying');
      assert.ok(localHops(t) > 0);
      assert.ok(['running', 'executing'].includes((await t.service.get(a, ctx)).state));
    } finally {
      await t.stop();
    }
  });
});
