/**
 * Traces of the agent runtime, with real agents and an in-memory exporter:
 * the deploy's four steps under the call's span, one trace from a client
 * through ping to pong over message metadata, the execute span of a success
 * and of a crash, and trace ids in the log lines of each hop whether the
 * trace is recorded or not. The test plays the door: it opens the
 * `svc.api.*` span the gRPC or REST door would.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { hrTimeToMilliseconds } from '@opentelemetry/core';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { createSimulatedClock } from '../../supervisors/index.js';
import { isSvcError } from '../../src/errors/svc-error.js';
import { FUEL_USED_ATTRIBUTE } from '../../src/agents/message-trace.js';
import { API_SPANS, SPAN_ATTRIBUTES, SPANS } from '../../src/telemetry/span-names.js';
import { memoryTracing, parentOf } from '../telemetry/telemetry-fixtures.js';
import { INITIALIZE_TRAPS, compile } from './agent-wat.js';
import { CLIENT, TEST_TIMEOUT_MS, ask, ctx, deploy, example, messages, startTestServer, transitions, until, waitForState, type TestServer } from './agent-fixtures.js';

const MS = 1_000_000n;
const ns = (time: ReadableSpan['startTime']) => BigInt(time[0]) * 1_000_000_000n + BigInt(time[1]);
/** Start order; starts are whole milliseconds, so the end decides between steps that started in the same one. */
const byStart = (a: ReadableSpan, b: ReadableSpan) => Number(ns(a.startTime) - ns(b.startTime) || ns(a.endTime) - ns(b.endTime));
const traceIdOf = (traceparent: string | undefined) => traceparent?.split('-')[1];
const childrenOf = (spans: ReadableSpan[], parent: ReadableSpan) => spans.filter((s) => parentOf(s) === parent.spanContext().spanId).sort(byStart);
const transitionLines = (t: TestServer, agentId: string) => t.logs.filter((l) => l.msg === 'agent transition' && l.agent_id === agentId);

/** Sends `start:<pong>:<rounds>` to ping and waits for the end of the game. */
async function playGame(t: TestServer, ping: string, pong: string, rounds: number, send: (run: () => Promise<unknown>) => Promise<unknown>): Promise<void> {
  await send(() => t.service.send({ receiver: ping, message_type: 'request', content: `start:${pong}:${rounds}` }, ctx));
  await until(() => t.logs.some((l) => l.msg === 'agent log' && l.agent_id === ping && String(l.line).startsWith('ping: done')), 'the end of the game');
}

describe('agent tracing', { timeout: TEST_TIMEOUT_MS }, () => {
  it('a deploy is validate, create, register, emit under the call span, one after the other', async () => {
    const { tracing, spans } = memoryTracing();
    const t = await startTestServer({ tracing, clock: createSimulatedClock() });
    try {
      // A subscriber that hears of the agent finds it stored and listed: events are published last.
      const heard: boolean[] = [];
      t.host().bus.subscribe().subscribe((event) => {
        if (event.kind === 'lifecycle') heard.push(t.host().store.getAgent(event.agent_id) !== undefined && t.host().get(event.agent_id) !== undefined);
      });
      const id = await tracing.withSpan(API_SPANS.DeployAgent, {}, () => deploy(t, example('echo'), 'echo'));
      const finished = await spans();
      const call = finished.find((s) => s.name === API_SPANS.DeployAgent)!;
      const traceId = call.spanContext().traceId;
      const steps = childrenOf(finished, call);
      assert.deepEqual(steps.map((s) => s.name), [SPANS.wasmValidate, SPANS.runtimeCreate, SPANS.registryRegister, SPANS.eventsEmit]);
      assert.equal(finished.filter((s) => s.spanContext().traceId === traceId).length, 5, 'nothing else in the trace');
      // The SDK's start times are whole milliseconds (its end times are finer): one step starts within that of the end of the one before.
      for (let i = 1; i < steps.length; i++) assert.ok(ns(steps[i]!.startTime) >= ns(steps[i - 1]!.endTime) - MS, `${steps[i]!.name} starts after ${steps[i - 1]!.name} ends`);
      const [validate, create, register, emit] = steps;
      assert.equal(validate!.attributes[SPAN_ATTRIBUTES.moduleSize], example('echo').byteLength);
      assert.match(String(validate!.attributes[SPAN_ATTRIBUTES.moduleSha256]), /^[0-9a-f]{64}$/);
      assert.deepEqual([create!.attributes[SPAN_ATTRIBUTES.agentId], create!.attributes[SPAN_ATTRIBUTES.agentName]], [id, 'echo']);
      assert.equal(register!.attributes[SPAN_ATTRIBUTES.agentId], id);
      assert.deepEqual([emit!.attributes[SPAN_ATTRIBUTES.agentId], emit!.attributes[SPAN_ATTRIBUTES.eventType]], [id, 'lifecycle']);
      assert.ok(steps.every((s) => s.status.code === SpanStatusCode.UNSET));

      assert.deepEqual(heard, [true, true], 'starting and running, both after the store write');
      const lines = transitionLines(t, id);
      assert.deepEqual(lines.map((l) => l.to), ['starting', 'running']);
      assert.ok(lines.every((l) => l.trace_id === traceId), 'transition lines carry the deploy trace id');

      const undeployTrace = await tracing.withSpan(API_SPANS.UndeployAgent, {}, async (span) => {
        await t.service.undeploy(id, ctx);
        return span.spanContext().traceId;
      });
      assert.deepEqual(transitionLines(t, id).slice(2).map((l) => [l.to, l.trace_id]), [['stopping', undeployTrace], ['stopped', undeployTrace]]);
      const undeploy = (await spans()).find((s) => s.name === API_SPANS.UndeployAgent)!;
      assert.deepEqual(childrenOf(await spans(), undeploy).map((s) => s.name), [SPANS.eventsEmit, SPANS.eventsEmit], 'one per transition');
    } finally {
      await t.stop();
    }
  });

  it('a deploy whose start fails is validate, create (failed), emit, and stores nothing', async () => {
    const { tracing, spans } = memoryTracing();
    const t = await startTestServer({ tracing, clock: createSimulatedClock() });
    try {
      const events = t.events();
      const module = await compile(INITIALIZE_TRAPS);
      const error = await tracing.withSpan(API_SPANS.DeployAgent, {}, () => deploy(t, module, 'broken')).catch((e: unknown) => e);
      assert.ok(isSvcError(error) && error.code === 'INVALID_MODULE', String(error));
      const finished = await spans();
      const call = finished.find((s) => s.name === API_SPANS.DeployAgent)!;
      const steps = childrenOf(finished, call);
      assert.deepEqual(steps.map((s) => s.name), [SPANS.wasmValidate, SPANS.runtimeCreate, SPANS.eventsEmit]);
      assert.equal(steps[1]!.status.code, SpanStatusCode.ERROR);
      assert.equal(t.host().store.countAgents(), 0);
      const agentId = String(steps[1]!.attributes[SPAN_ATTRIBUTES.agentId]);
      assert.deepEqual(transitions(events, agentId).map((e) => `${e.from}>${e.to}`), ['null>starting', 'starting>stopped']);
    } finally {
      await t.stop();
    }
  });

  it('client → ping → pong is one trace: each execution continues its message, each message its sender', async () => {
    const { tracing, spans } = memoryTracing();
    const t = await startTestServer({ tracing, clock: createSimulatedClock() });
    try {
      const events = t.events();
      const pong = await deploy(t, example('pong'), 'pong');
      const ping = await deploy(t, example('ping'), 'ping');
      await playGame(t, ping, pong, 2, (run) => tracing.withSpan(API_SPANS.SendMessage, {}, run));
      const finished = await spans();
      const call = finished.find((s) => s.name === API_SPANS.SendMessage)!;
      const traceId = call.spanContext().traceId;
      const trace = finished.filter((s) => s.spanContext().traceId === traceId);
      const byId = new Map(trace.map((s) => [s.spanContext().spanId, s]));
      const executions = trace.filter((s) => s.name === SPANS.agentExecute);
      const sends = trace.filter((s) => s.name === SPANS.messagesSend);
      // ping: the start and two pongs; pong: two pings.
      assert.equal(executions.filter((s) => s.attributes[SPAN_ATTRIBUTES.agentId] === ping).length, 3);
      assert.equal(executions.filter((s) => s.attributes[SPAN_ATTRIBUTES.agentId] === pong).length, 2);
      assert.equal(sends.length, 5, "the client's start, two pings, two pongs");

      for (const execution of executions) {
        const sent = byId.get(parentOf(execution));
        assert.equal(sent?.name, SPANS.messagesSend, 'an execution is a child of its message');
        assert.equal(sent.attributes[SPAN_ATTRIBUTES.messageId], execution.attributes[SPAN_ATTRIBUTES.messageId]);
        assert.equal(execution.kind, SpanKind.CONSUMER);
      }
      for (const send of sends) {
        const parent = byId.get(parentOf(send));
        assert.equal(send.kind, SpanKind.PRODUCER);
        if (send.attributes[SPAN_ATTRIBUTES.messageSender] === CLIENT) assert.equal(parent, call, "the client's message is a child of the call");
        else assert.deepEqual([parent?.name, parent?.attributes[SPAN_ATTRIBUTES.agentId]], [SPANS.agentExecute, send.attributes[SPAN_ATTRIBUTES.messageSender]]);
      }

      const game = messages(events, 'sent');
      assert.equal(game.length, 5);
      assert.ok(game.every((m) => traceIdOf(m.metadata['traceparent']) === traceId), 'every message carries the trace');
      const logged = t.logs.filter((l) => l.msg === 'agent log' && l.agent_id === ping);
      assert.ok(logged.length >= 2 && logged.every((l) => l.trace_id === traceId), "ping's stderr lines carry the trace id");
    } finally {
      await t.stop();
    }
  });

  it('an execution span names the agent, the message type, its status and the fuel it used; a crash is an error in its trace', async () => {
    const { tracing, spans } = memoryTracing();
    const t = await startTestServer({ tracing, clock: createSimulatedClock() });
    try {
      const events = t.events();
      const crasher = await deploy(t, example('crasher'), 'crasher');
      await tracing.withSpan(API_SPANS.SendMessage, {}, () => ask(t, events, crasher, 'hello'));
      const crash = await tracing.withSpan(API_SPANS.SendMessage, {}, async (span) => {
        await ask(t, events, crasher, 'crash');
        return span.spanContext().traceId;
      });
      await waitForState(t, crasher, 'restarting');
      const finished = await spans();
      const [ok, failed] = finished.filter((s) => s.name === SPANS.agentExecute).sort(byStart);
      assert.deepEqual(
        [ok!.attributes[SPAN_ATTRIBUTES.agentId], ok!.attributes[SPAN_ATTRIBUTES.messageType], ok!.attributes[SPAN_ATTRIBUTES.executionStatus]],
        [crasher, 'request', 'success'],
      );
      assert.ok(Number(ok!.attributes[FUEL_USED_ATTRIBUTE]) > 0);
      assert.equal(ok!.status.code, SpanStatusCode.UNSET);
      assert.equal(failed!.attributes[SPAN_ATTRIBUTES.executionStatus], 'error');
      assert.equal(failed!.status.code, SpanStatusCode.ERROR);
      assert.match(String(failed!.status.message), /^trap: /);
      assert.equal(failed!.spanContext().traceId, crash);

      const restarting = transitionLines(t, crasher).find((l) => l.to === 'restarting');
      assert.equal(restarting?.trace_id, crash, 'the crash transition is logged in the trace of the message that caused it');
      const emitted = finished.find((s) => s.name === SPANS.eventsEmit && parentOf(s) === failed!.spanContext().spanId);
      assert.ok(emitted, 'its lifecycle event is published in the execution span');
    } finally {
      await t.stop();
    }
  });

  it("an execution span is stamped with the dispatcher's clock readings when that clock tells real time", async () => {
    const { tracing, spans } = memoryTracing();
    // A simulated clock that claims an epoch origin: the span's times can only come from its readings.
    const origin = Date.UTC(2001, 0, 1);
    const clock = Object.assign(createSimulatedClock(5_000), { timeOrigin: origin });
    const t = await startTestServer({ tracing, clock });
    try {
      const events = t.events();
      const echo = await deploy(t, example('echo'), 'echo');
      await tracing.withSpan(API_SPANS.SendMessage, {}, () => ask(t, events, echo, 'hello'));
      const execute = (await spans()).find((s) => s.name === SPANS.agentExecute);
      assert.ok(execute, 'the execution is traced');
      assert.ok(Math.abs(hrTimeToMilliseconds(execute.startTime) - (origin + 5_000)) < 0.001, 'dispatched at the clock reading');
      assert.ok(Math.abs(hrTimeToMilliseconds(execute.endTime) - (origin + 5_000)) < 0.001, 'settled at the clock reading (the clock stood still)');
    } finally {
      await t.stop();
    }
  });

  it('a trace that is not recorded makes no message spans and still reaches every hop and its log lines', async () => {
    const { tracing, spans } = memoryTracing({ trace_sample_rate: 0 });
    const t = await startTestServer({ tracing, clock: createSimulatedClock() });
    try {
      const events = t.events();
      const pong = await deploy(t, example('pong'), 'pong');
      const ping = await deploy(t, example('ping'), 'ping');
      let traceId = '';
      await playGame(t, ping, pong, 2, (run) =>
        tracing.withSpan(API_SPANS.SendMessage, {}, (span) => {
          traceId = span.spanContext().traceId;
          return run();
        }),
      );
      assert.deepEqual(await spans(), [], 'nothing recorded');
      const game = messages(events, 'sent');
      assert.equal(game.length, 5);
      assert.ok(game.every((m) => traceIdOf(m.metadata['traceparent']) === traceId && m.metadata['traceparent']!.endsWith('-00')));
      assert.ok(t.logs.filter((l) => l.msg === 'agent log' && l.agent_id === ping).every((l) => l.trace_id === traceId));
    } finally {
      await t.stop();
    }
  });

  it('with tracing off, a client message outside any call starts a trace, and the trace id a client wrote is replaced', async () => {
    const t = await startTestServer({ clock: createSimulatedClock() });
    try {
      const events = t.events();
      const echo = await deploy(t, example('echo'), 'echo');
      const forged = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
      const reply = await (async () => {
        const { message_id } = await t.service.send({ receiver: echo, message_type: 'request', content: 'hi', metadata: { traceparent: forged, tracestate: 'x=1', kept: 'yes' } }, ctx);
        return until(() => messages(events, 'delivered').find((m) => m.in_reply_to === message_id), 'the reply');
      })();
      const request = messages(events, 'sent').find((m) => m.sender === CLIENT)!;
      assert.notEqual(request.metadata['traceparent'], forged);
      assert.equal(request.metadata['tracestate'], undefined);
      assert.equal(request.metadata['kept'], 'yes');
      assert.match(request.metadata['traceparent']!, /^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
      assert.equal(traceIdOf(reply.metadata['traceparent']), traceIdOf(request.metadata['traceparent']));
    } finally {
      await t.stop();
    }
  });

  it('hibernation is not part of the deploy that armed the idle timer; the wake is part of the message that caused it', async () => {
    const clock = createSimulatedClock();
    const { tracing, spans } = memoryTracing();
    const t = await startTestServer({ tracing, clock, overrides: { 'runtime.agent_idle_timeout': '60s' } });
    try {
      const events = t.events();
      const id = await tracing.withSpan(API_SPANS.DeployAgent, {}, () => deploy(t, example('counter'), 'counter'));
      await clock.advance(60_000);
      await waitForState(t, id, 'hibernated');
      const hibernated = transitionLines(t, id).find((l) => l.to === 'hibernated');
      assert.equal(hibernated?.trace_id, undefined);
      assert.equal((await spans()).filter((s) => s.name === SPANS.eventsEmit).length, 1, "only the deploy's");

      const wakeTrace = await tracing.withSpan(API_SPANS.SendMessage, {}, async (span) => {
        assert.equal((await ask(t, events, id, 'wake up')).content, '1');
        return span.spanContext().traceId;
      });
      const woke = transitionLines(t, id).find((l) => l.from === 'hibernated');
      assert.equal(woke?.trace_id, wakeTrace);
      const emits = (await spans()).filter((s) => s.name === SPANS.eventsEmit);
      assert.ok(emits.some((s) => s.spanContext().traceId === wakeTrace), 'the wake is published in the trace of the message');
    } finally {
      await t.stop();
    }
  });
});
