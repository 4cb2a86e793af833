/**
 * message-trace.ts without a server: which sends and executions get spans
 * (only in recorded traces, new ones sampled at `message_trace_sample_rate`),
 * what context each message carries on, and that neither a client nor an
 * agent can choose the trace context of what it sends.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ROOT_CONTEXT, SpanStatusCode, trace, TraceFlags } from '@opentelemetry/api';
import { hrTimeToMilliseconds } from '@opentelemetry/core';
import { FUEL_USED_ATTRIBUTE, createMessageTrace } from '../../src/agents/message-trace.js';
import type { RouteOutcome } from '../../src/agents/router.js';
import { completeMessage, type Message } from '../../src/bus/message.js';
import type { ExecutionResult } from '../../src/sandbox/types.js';
import { SPAN_ATTRIBUTES, SPANS } from '../../src/telemetry/span-names.js';
import { createTracing } from '../../src/telemetry/tracing.js';
import { memoryTracing, parentOf, tracingConfig } from '../telemetry/telemetry-fixtures.js';
import { createIdGenerator } from '../../src/bus/message-id.js';

const newId = createIdGenerator();

const SAMPLED = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const UNSAMPLED = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00';
const ACCEPTED: RouteOutcome = { ok: true };

const message = (metadata: Record<string, string> = {}, sender = 'agent-a'): Message => completeMessage({ sender, receiver: 'agent-b', message_type: 'inform', metadata }, { newId });
const routed = () => {
  const seen: Message[] = [];
  return { seen, route: (m: Message) => (seen.push(m), ACCEPTED) };
};
const traceIdOf = (m: Message) => m.metadata['traceparent']?.split('-')[1];
const ok: ExecutionResult = { ok: true, stdout: [], stderr: [], fuelUsed: 1234n, durationNs: 1, memoryBytes: 0 };

describe('message trace', () => {
  it('starts an execution span only when the message trace is recorded', async () => {
    const { tracing, spans } = memoryTracing();
    const traced = createMessageTrace(tracing);
    const off = createMessageTrace(createTracing(tracingConfig({ enable_tracing: false }), { serviceVersion: '0' }));
    const cases: Array<[string, ReturnType<typeof createMessageTrace>, Record<string, string>, boolean]> = [
      ['sampled', traced, { traceparent: SAMPLED }, true],
      ['not sampled', traced, { traceparent: UNSAMPLED }, false],
      ['no context: a root, sampled at rate 1', traced, {}, true],
      ['a traceparent of another form: the propagator and sampler decide', traced, { traceparent: 'garbage' }, true],
      ['tracing off', off, { traceparent: SAMPLED }, false],
    ];
    for (const [name, subject, metadata, expected] of cases) {
      const span = subject.startExecution('agent-b', message(metadata));
      assert.equal(span !== undefined, expected, name);
      if (span !== undefined) subject.endExecution(span, ok);
    }
    const finished = await spans();
    assert.equal(finished.length, 3, 'the sampled message, the root and the other form');
    const sampled = finished.find((s) => s.spanContext().traceId === '4bf92f3577b34da6a3ce929d0e0e4736');
    assert.equal(sampled?.name, SPANS.agentExecute);
    assert.equal(parentOf(sampled), '00f067aa0ba902b7', 'a child of the context the message carries');
    assert.deepEqual(
      [sampled.attributes[SPAN_ATTRIBUTES.agentId], sampled.attributes[SPAN_ATTRIBUTES.executionStatus], sampled.attributes[FUEL_USED_ATTRIBUTE]],
      ['agent-b', 'success', 1234],
    );
  });

  it('a traceparent is read as the W3C propagator reads it, whichever way it is checked', async () => {
    const { tracing, spans } = memoryTracing();
    const subject = createMessageTrace(tracing);
    const [version, traceId, spanId] = SAMPLED.split('-') as [string, string, string];
    const cases: Array<[string, string, string | undefined]> = [
      ['version 00, lowercase', SAMPLED, spanId],
      ['a later version with more fields', `cc-${traceId}-${spanId}-01-later`, spanId],
      ['upper-case hex is not W3C', SAMPLED.toUpperCase(), undefined],
      ['an all-zero trace id', `${version}-${'0'.repeat(32)}-${spanId}-01`, undefined],
      ['an all-zero span id', `${version}-${traceId}-${'0'.repeat(16)}-01`, undefined],
      ['a letter that is not hex', `${version}-${traceId}-${spanId.slice(0, 15)}g-01`, undefined],
      ['one digit short', SAMPLED.slice(0, 54), undefined],
    ];
    const ids: string[] = [];
    for (const [, traceparent] of cases) {
      const sent = message({ traceparent });
      ids.push(sent.message_id);
      const span = subject.startExecution('agent-b', sent);
      assert.ok(span, 'rate 1: a span either way');
      subject.endExecution(span, ok);
    }
    const finished = await spans();
    assert.equal(finished.length, cases.length);
    for (const [i, [name, , parent]] of cases.entries()) {
      // Found by message id: a case's span is the one that handled its message.
      const span = finished.find((s) => s.attributes[SPAN_ATTRIBUTES.messageId] === ids[i]);
      assert.ok(span, name);
      if (parent === undefined) {
        assert.equal(parentOf(span), '', `${name}: a new trace`);
        assert.notEqual(span.spanContext().traceId, traceId, name);
      } else {
        assert.equal(parentOf(span), parent, `${name}: a child of the message's context`);
        assert.equal(span.spanContext().traceId, traceId, name);
      }
    }
  });

  it('a failed execution is an error span with the failure as its status message', async () => {
    const { tracing, spans } = memoryTracing();
    const subject = createMessageTrace(tracing);
    subject.endExecution(subject.startExecution('agent-b', message({ traceparent: SAMPLED }))!, { ...ok, ok: false, failure: 'trap', message: 'unreachable' });
    const [span] = await spans();
    assert.equal(span?.attributes[SPAN_ATTRIBUTES.executionStatus], 'error');
    assert.deepEqual([span?.status.code, span?.status.message], [SpanStatusCode.ERROR, 'trap: unreachable']);
  });

  it('an agent output carries the incoming context unchanged when unrecorded, a send span child of the execution when recorded', async () => {
    const { tracing, spans } = memoryTracing();
    const subject = createMessageTrace(tracing);
    const { seen, route } = routed();
    const incoming = message({ traceparent: UNSAMPLED, tracestate: 'k=v' }, 'client:x');
    subject.sendFromAgent(message({ traceparent: SAMPLED, other: 'kept' }), incoming, undefined, route);
    assert.deepEqual(seen[0]!.metadata, { traceparent: UNSAMPLED, other: 'kept', tracestate: 'k=v' }, "the agent's own traceparent is replaced");
    subject.sendFromAgent(message({ tracestate: 'forged=1' }), message(), undefined, route);
    assert.deepEqual(seen[1]!.metadata, {}, 'nothing to carry: nothing the agent wrote passes either');
    assert.deepEqual(await spans(), []);

    const execution = subject.startExecution('agent-a', message({ traceparent: SAMPLED }))!;
    subject.sendFromAgent(message(), incoming, execution, route);
    subject.endExecution(execution, ok);
    const [send, executed] = await spans();
    assert.equal(send?.name, SPANS.messagesSend);
    assert.equal(parentOf(send!), executed!.spanContext().spanId);
    assert.match(seen[2]!.metadata['traceparent']!, new RegExp(`^00-${send!.spanContext().traceId}-${send!.spanContext().spanId}-01$`));
  });

  it("the messages of an ended execution are stamped with the instant it ended, the span of one still running with its routing", async () => {
    const { tracing, spans } = memoryTracing();
    const subject = createMessageTrace(tracing);
    const { route } = routed();
    const ended = subject.startExecution('agent-a', message({ traceparent: SAMPLED }))!;
    subject.endExecution(ended, ok);
    subject.sendFromAgent(message(), message(), ended, route);
    const running = subject.startExecution('agent-a', message({ traceparent: SAMPLED }))!;
    const slowRoute = (m: Message): RouteOutcome => {
      const until = performance.now() + 2;
      while (performance.now() < until);
      return route(m);
    };
    subject.sendFromAgent(message(), message(), running, slowRoute);
    subject.endExecution(running, ok);
    const finished = await spans();
    const nanos = (time: [number, number]): bigint => BigInt(time[0]) * 1_000_000_000n + BigInt(time[1]);
    const [first, second] = finished.filter((span) => span.name === SPANS.messagesSend);
    const endedSpan = finished.find((span) => span.spanContext().spanId === ended.spanContext().spanId)!;
    assert.equal(parentOf(first!), endedSpan.spanContext().spanId);
    assert.deepEqual([nanos(first!.startTime), nanos(first!.endTime)], [nanos(endedSpan.endTime), nanos(endedSpan.endTime)]);
    assert.ok(nanos(second!.endTime) - nanos(second!.startTime) >= 2_000_000n, 'a running execution: the span covers the routing');
  });

  it("a client's message carries its send span inside a recorded call, the call's context otherwise, never the client's own", async () => {
    const { tracing, spans } = memoryTracing({ trace_sample_rate: 0, message_trace_sample_rate: 0 });
    const subject = createMessageTrace(tracing);
    const { seen, route } = routed();
    const unsampled = tracing.startSpan('svc.api.send_message');
    subject.sendFromClient(message({ traceparent: SAMPLED, tracestate: 'forged=1' }, 'client:x'), trace.setSpan(ROOT_CONTEXT, unsampled), route);
    assert.equal(seen[0]!.metadata['traceparent'], `00-${unsampled.spanContext().traceId}-${unsampled.spanContext().spanId}-00`);
    assert.equal(seen[0]!.metadata['tracestate'], undefined);
    assert.deepEqual(await spans(), [], 'no send span in an unrecorded trace');

    const recorded = memoryTracing();
    const call = recorded.tracing.startSpan('svc.api.send_message');
    assert.equal(call.spanContext().traceFlags & TraceFlags.SAMPLED, TraceFlags.SAMPLED);
    const refused: RouteOutcome = { ok: false, reason: 'mailbox_full' };
    createMessageTrace(recorded.tracing).sendFromClient(message({}, 'client:x'), trace.setSpan(ROOT_CONTEXT, call), () => refused);
    const [send] = await recorded.spans();
    assert.equal(parentOf(send!), call.spanContext().spanId);
    assert.deepEqual([send!.status.code, send!.status.message], [SpanStatusCode.ERROR, 'mailbox_full']);

    subject.sendFromClient(message({}, 'client:x'), ROOT_CONTEXT, route);
    assert.match(seen[1]!.metadata['traceparent']!, /^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/, 'outside any call, a trace of its own');
    assert.notEqual(traceIdOf(seen[1]!), unsampled.spanContext().traceId);
  });

  it('stamps an execution span with the instants its caller read, and the messages it sends with its end', async () => {
    const { tracing, spans } = memoryTracing();
    const subject = createMessageTrace(tracing);
    // An hour ago: no reading of the clock now could give these times.
    const start = Date.now() - 3_600_000;
    const end = start + 2.5;
    const incoming = message({ traceparent: SAMPLED });
    const execution = subject.startExecution('agent-b', incoming, start)!;
    subject.endExecution(execution, ok, end);
    const { route } = routed();
    subject.sendFromAgent(message({}, 'agent-b'), incoming, execution, route);
    const finished = await spans();
    const execute = finished.find((s) => s.name === SPANS.agentExecute)!;
    const send = finished.find((s) => s.name === SPANS.messagesSend)!;
    assert.ok(Math.abs(hrTimeToMilliseconds(execute.startTime) - start) < 0.001 && Math.abs(hrTimeToMilliseconds(execute.endTime) - end) < 0.001, 'the execution spans the two readings');
    assert.ok(Math.abs(hrTimeToMilliseconds(send.startTime) - end) < 0.001 && Math.abs(hrTimeToMilliseconds(send.endTime) - end) < 0.001, 'its message is sent at its end');
  });

  it('a message that starts a trace is sampled at message_trace_sample_rate; one in a trace follows it, whatever that rate', async () => {
    const { tracing, spans } = memoryTracing({ trace_sample_rate: 1, message_trace_sample_rate: 0 });
    const subject = createMessageTrace(tracing);
    const { seen, route } = routed();
    subject.sendFromClient(message({}, 'client:x'), ROOT_CONTEXT, route);
    assert.match(seen[0]!.metadata['traceparent']!, /-00$/, 'a client message outside any call: not sampled at rate 0');
    assert.equal(subject.startExecution('agent-b', message()), undefined, 'a message without context: not sampled at rate 0');
    const call = tracing.startSpan('svc.api.send_message');
    subject.sendFromClient(message({}, 'client:x'), trace.setSpan(ROOT_CONTEXT, call), route);
    const execution = subject.startExecution('agent-b', seen[1]!);
    assert.ok(execution, "a message in the call's sampled trace");
    subject.endExecution(execution, ok);
    call.end();
    const finished = await spans();
    assert.deepEqual(finished.map((s) => s.name).sort(), [SPANS.agentExecute, 'svc.api.send_message', SPANS.messagesSend]);

    const messagesOnly = memoryTracing({ trace_sample_rate: 0, message_trace_sample_rate: 1 });
    const other = createMessageTrace(messagesOnly.tracing);
    const root = other.startExecution('agent-b', message());
    assert.ok(root, 'a message without context starts a sampled trace at rate 1');
    other.endExecution(root, ok);
    other.sendFromClient(message({}, 'client:x'), trace.setSpan(ROOT_CONTEXT, messagesOnly.tracing.startSpan('svc.api.send_message')), route);
    assert.match(seen[2]!.metadata['traceparent']!, /-00$/, "a call's unsampled trace stays unsampled");
    assert.deepEqual((await messagesOnly.spans()).map((s) => [s.name, parentOf(s)]), [[SPANS.agentExecute, '']]);
  });

  it('an unsampled traceparent seen before is decided the same, however many others came between', async () => {
    const { tracing, spans } = memoryTracing();
    const subject = createMessageTrace(tracing);
    const traceparentOf = (i: number) => `00-${i.toString(16).padStart(32, '0')}-00f067aa0ba902b7-00`;
    for (let round = 0; round < 2; round++) {
      for (let i = 1; i <= 300; i++) assert.equal(subject.startExecution('agent-b', message({ traceparent: traceparentOf(i) })), undefined);
    }
    const sampled = subject.startExecution('agent-b', message({ traceparent: SAMPLED }));
    assert.ok(sampled, 'a sampled one is still traced');
    subject.endExecution(sampled, ok);
    assert.equal((await spans()).length, 1);
  });
});
