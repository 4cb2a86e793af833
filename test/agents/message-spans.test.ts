/**
 * The message path's span records (message-spans.ts): nothing is written
 * until the queue writes them, and then each span carries its own message's
 * attributes, its ids and parent links as bytes, and its outcome. Every span
 * is read back from its OTLP bytes.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SpanKind, SpanStatusCode, TraceFlags } from '@opentelemetry/api';
import { resources, type tracing } from '@opentelemetry/sdk-node';
import { ExecutionSpan, FUEL_USED_ATTRIBUTE, SendSpan } from '../../src/agents/message-spans.js';
import { completeMessage, type Message } from '../../src/bus/message.js';
import type { ExecutionResult } from '../../src/sandbox/types.js';
import type { DeferredSpan, SpanChunkSink } from '../../src/telemetry/light-span.js';
import { ProtoWriter } from '../../src/telemetry/proto-writer.js';
import { readSpans } from '../../src/telemetry/span-record-reader.js';
import { hrTimeToMs } from '../../src/telemetry/span-record.js';
import { SPAN_ATTRIBUTES, SPANS } from '../../src/telemetry/span-names.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_ID = '00f067aa0ba902b7';
const PARENT = { traceId: TRACE_ID, spanId: PARENT_ID, traceFlags: TraceFlags.SAMPLED, traceState: '' };
const ok: ExecutionResult = { ok: true, stdout: [], stderr: [], fuelUsed: 1234n, durationNs: 1, memoryBytes: 0 };

/** A sink that keeps what is deferred and writes it only when told, as the export queue writes after the post. */
function queue() {
  const deferred: DeferredSpan[] = [];
  let opened = 0;
  const chunk = new ProtoWriter(1024);
  const sink: SpanChunkSink = {
    open() {
      opened += 1;
      return chunk;
    },
    commit() {},
    defer: (span) => void deferred.push(span),
  };
  return {
    sink,
    deferred,
    opened: () => opened,
    /** Writes the deferred spans and reads them back. */
    write(): tracing.ReadableSpan[] {
      for (const span of deferred.splice(0)) span.writeTo(sink.open()!);
      return readSpans(chunk.bytes.subarray(0, chunk.pos), resources.resourceFromAttributes({}), { name: 'test' });
    },
  };
}

const message = (fields: Partial<Message> = {}): Message =>
  completeMessage({ sender: 'agent-a', receiver: 'agent-b', message_type: 'request', ...fields });

describe('message path span records', () => {
  it('write nothing on the path, then each span with its own message, ids and times', () => {
    const q = queue();
    const first = message({ conversation_id: 'c-1' });
    const second = message({ message_type: 'inform', conversation_id: 'c-2' });
    const execution = new ExecutionSpan(q.sink, 'agent-b', first, PARENT, 1_000.25);
    execution.finish(ok, 1_002.5);
    const send = new SendSpan(execution, second);
    send.finish();
    assert.equal(q.opened(), 0, 'nothing written before the queue writes');
    assert.equal(q.deferred.length, 2);
    assert.equal(send.traceparent(), `00-${TRACE_ID}-${send.spanId}-01`);

    const [executed, sent] = q.write();
    assert.equal(executed!.name, SPANS.agentExecute);
    assert.equal(executed!.kind, SpanKind.CONSUMER);
    assert.equal(executed!.spanContext().traceId, TRACE_ID);
    assert.equal(executed!.spanContext().spanId, execution.spanId);
    assert.equal(executed!.parentSpanContext?.spanId, PARENT_ID);
    assert.deepEqual(executed!.attributes, {
      [SPAN_ATTRIBUTES.agentId]: 'agent-b',
      [SPAN_ATTRIBUTES.messageId]: first.message_id,
      [SPAN_ATTRIBUTES.messageType]: 'request',
      [SPAN_ATTRIBUTES.executionStatus]: 'success',
      [FUEL_USED_ATTRIBUTE]: 1234,
    });
    assert.deepEqual([hrTimeToMs(executed!.startTime), hrTimeToMs(executed!.endTime)], [1_000.25, 1_002.5]);

    // The send span reuses the writer's list after the execution's: its values are its own message's.
    assert.equal(sent!.name, SPANS.messagesSend);
    assert.equal(sent!.kind, SpanKind.PRODUCER);
    assert.equal(sent!.spanContext().traceId, TRACE_ID);
    assert.equal(sent!.spanContext().spanId, send.spanId);
    assert.equal(sent!.parentSpanContext?.spanId, execution.spanId);
    assert.deepEqual(sent!.attributes, {
      [SPAN_ATTRIBUTES.messageId]: second.message_id,
      [SPAN_ATTRIBUTES.messageType]: 'inform',
      [SPAN_ATTRIBUTES.messageSender]: 'agent-a',
      [SPAN_ATTRIBUTES.messageReceiver]: 'agent-b',
      [SPAN_ATTRIBUTES.conversationId]: 'c-2',
    });
    assert.deepEqual([hrTimeToMs(sent!.startTime), hrTimeToMs(sent!.endTime)], [1_002.5, 1_002.5], 'sent at the execution\'s end');
  });

  it('continue a send span held as bytes: the next execution is its child, in the same trace', () => {
    const q = queue();
    const execution = new ExecutionSpan(q.sink, 'agent-b', message(), PARENT, 10);
    execution.finish(ok, 11);
    const send = new SendSpan(execution, message());
    send.finish();
    const next = new ExecutionSpan(q.sink, 'agent-a', message(), send, 12);
    next.finish(ok, 13);
    const spans = q.write();
    const written = spans.find((span) => span.spanContext().spanId === next.spanId)!;
    assert.equal(written.spanContext().traceId, TRACE_ID);
    assert.equal(written.parentSpanContext?.spanId, send.spanId);
    assert.equal(next.traceBlock, execution.traceBlock, 'one copy of the trace id for the conversation');
  });

  it('record a failed execution and a refused send as errors, written by the general writer', () => {
    const q = queue();
    const execution = new ExecutionSpan(q.sink, 'agent-b', message(), PARENT, 10);
    execution.finish({ ...ok, ok: false, failure: 'trap', message: 'unreachable' }, 11);
    const send = new SendSpan(execution, message());
    send.finish('unknown_receiver');
    const [executed, sent] = q.write();
    assert.deepEqual(executed!.status, { code: SpanStatusCode.ERROR, message: 'trap: unreachable' });
    assert.equal(executed!.attributes[SPAN_ATTRIBUTES.executionStatus], 'error');
    assert.deepEqual(sent!.status, { code: SpanStatusCode.ERROR, message: 'unknown_receiver' });
    assert.equal(sent!.parentSpanContext?.spanId, execution.spanId);
  });

  it('carry a tracestate and uppercase parent ids through the general writer', () => {
    const q = queue();
    const parent = { ...PARENT, spanId: PARENT_ID.toUpperCase(), traceState: 'vendor=1' };
    const execution = new ExecutionSpan(q.sink, 'agent-b', message(), parent, 10);
    execution.finish(ok, 11);
    const [executed] = q.write();
    assert.equal(executed!.parentSpanContext?.spanId, PARENT_ID);
    assert.equal(executed!.spanContext().traceState?.get('vendor'), '1');
    assert.equal(execution.context() !== undefined, true);
  });

  it('end once: a second finish changes nothing and queues nothing', () => {
    const q = queue();
    const execution = new ExecutionSpan(q.sink, 'agent-b', message(), PARENT, 10);
    execution.finish(ok, 11);
    execution.finish({ ...ok, ok: false, failure: 'trap', message: 'late' }, 50);
    assert.equal(q.deferred.length, 1);
    const [executed] = q.write();
    assert.equal(hrTimeToMs(executed!.endTime), 11);
    assert.equal(executed!.status.code, SpanStatusCode.UNSET);
  });
});
