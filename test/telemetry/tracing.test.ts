import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as tick } from 'node:timers/promises';
import { SpanStatusCode, trace } from '@opentelemetry/api';
import { SvcError } from '../../src/errors/svc-error.js';
import { API_SPANS, SPAN_ATTRIBUTES, SPANS } from '../../src/telemetry/span-names.js';
import { currentTraceId, extractHttpHeaders } from '../../src/telemetry/trace-context.js';
import { isSpanId, isTraceId } from '../../src/telemetry/trace-ids.js';
import { createTracing } from '../../src/telemetry/tracing.js';
import { memoryTracing, parentOf, tracingConfig } from './telemetry-fixtures.js';

test('withSpan returns what a synchronous function returns and ends its span', async () => {
  const { tracing, spans } = memoryTracing();
  const value = tracing.withSpan(SPANS.wasmValidate, { [SPAN_ATTRIBUTES.moduleSize]: 42 }, (span) => {
    assert.ok(span.isRecording());
    return 7;
  });
  assert.equal(value, 7);
  const [span] = await spans();
  assert.equal(span?.name, SPANS.wasmValidate);
  assert.equal(span?.attributes[SPAN_ATTRIBUTES.moduleSize], 42);
  assert.equal(span?.status.code, SpanStatusCode.UNSET);
  await tracing.shutdown();
});

test('the span stays active across awaits: children started after an await are its children', async () => {
  const { tracing, spans } = memoryTracing();
  const seen: (string | undefined)[] = [];
  await tracing.withSpan(API_SPANS.DeployAgent, {}, async () => {
    for (const name of [SPANS.wasmValidate, SPANS.runtimeCreate, SPANS.registryRegister, SPANS.eventsEmit]) {
      await tick();
      await tracing.withSpan(name, {}, async () => {
        await tick();
        seen.push(tracing.currentSpanId());
      });
    }
  });
  const finished = await spans();
  const root = finished.find((s) => s.name === API_SPANS.DeployAgent);
  assert.ok(root);
  const children = finished.filter((s) => s !== root);
  assert.deepEqual(
    children.map((s) => s.name),
    [SPANS.wasmValidate, SPANS.runtimeCreate, SPANS.registryRegister, SPANS.eventsEmit],
  );
  for (const child of children) {
    assert.equal(parentOf(child), root.spanContext().spanId);
    assert.equal(child.spanContext().traceId, root.spanContext().traceId);
  }
  assert.deepEqual(seen, children.map((s) => s.spanContext().spanId));
  await tracing.shutdown();
});

test('a throw or a rejection is recorded on the span and passed on unchanged', async () => {
  const { tracing, spans } = memoryTracing();
  const boom = new SvcError('INVALID_MODULE', 'import env.abort is not allowed');
  assert.throws(() => tracing.withSpan('sync', {}, () => { throw boom; }), (err) => err === boom);
  await assert.rejects(tracing.withSpan('async', {}, async () => { await tick(); throw new Error('late'); }), /late/);
  await assert.rejects(tracing.withSpan('not an error', {}, () => Promise.reject('a string')), (err) => err === 'a string');
  const [sync, late, text] = await spans();
  assert.equal(sync?.status.code, SpanStatusCode.ERROR);
  assert.equal(sync?.status.message, 'import env.abort is not allowed');
  assert.equal(sync?.attributes[SPAN_ATTRIBUTES.errorCode], 'INVALID_MODULE');
  assert.deepEqual(sync?.events.map((e) => e.name), ['exception']);
  assert.equal(late?.status.code, SpanStatusCode.ERROR);
  assert.equal(late?.attributes[SPAN_ATTRIBUTES.errorCode], undefined);
  assert.equal(text?.status.message, 'a string');
  await tracing.shutdown();
});

test('startSpan leaves the end to the caller and takes an explicit parent', async () => {
  const { tracing, spans } = memoryTracing();
  const stream = tracing.startSpan(API_SPANS.SubscribeMessages, { [SPAN_ATTRIBUTES.agentId]: 'a1' });
  const child = tracing.startSpan(SPANS.messagesSend, {}, { parent: trace.setSpan(extractHttpHeaders({}), stream) });
  child.end();
  assert.equal((await spans()).length, 1, 'the stream span has not ended yet');
  stream.end();
  const [first, second] = await spans();
  assert.equal(second?.name, API_SPANS.SubscribeMessages);
  assert.equal(parentOf(first!), second?.spanContext().spanId);
  await tracing.shutdown();
});

test('tracing off: nothing is exported, yet every span has W3C ids and children share the trace id', async () => {
  for (const config of [tracingConfig({ enable_tracing: false }), tracingConfig({ enable_tracing: true, otlp_endpoint: '' })]) {
    const tracing = createTracing(config, { serviceVersion: '1.0.0' });
    assert.equal(tracing.exporting, false);
    const ids = await tracing.withSpan(API_SPANS.Health, {}, async (span) => {
      assert.equal(span.isRecording(), false);
      const outer = tracing.currentTraceId();
      await tick();
      const inner = tracing.withSpan(SPANS.eventsEmit, {}, () => [tracing.currentTraceId(), tracing.currentSpanId()]);
      return { outer, inner };
    });
    assert.ok(isTraceId(ids.outer ?? ''));
    assert.equal(ids.inner[0], ids.outer);
    assert.ok(isSpanId(ids.inner[1] ?? ''));
    assert.equal(tracing.currentTraceId(), undefined, 'no trace outside a span');
    await tracing.shutdown();
  }
});

test('X-Trace-Id becomes the trace id of the call\'s root span, tracing on or off', async () => {
  const requested = '4BF92F3577B34DA6A3CE929D0E0E4736';
  const { tracing, spans } = memoryTracing();
  const off = createTracing(tracingConfig({ enable_tracing: false }), { serviceVersion: '1.0.0' });
  for (const t of [tracing, off]) {
    const parent = extractHttpHeaders({ 'x-trace-id': requested });
    assert.equal(currentTraceId(parent), requested.toLowerCase(), 'known before any span starts');
    const seen = await t.withSpan(API_SPANS.Health, {}, async () => {
      await tick();
      return t.withSpan(SPANS.eventsEmit, {}, () => t.currentTraceId());
    }, { parent });
    assert.equal(seen, requested.toLowerCase());
  }
  const finished = await spans();
  const root = finished.find((s) => s.name === API_SPANS.Health);
  assert.equal(root?.spanContext().traceId, requested.toLowerCase());
  assert.equal(parentOf(root!), '', 'a real root, not a child of an invented parent');
  // The next root span gets a fresh id: the requested one was for that call only.
  assert.notEqual(tracing.withSpan('next', {}, () => tracing.currentTraceId()), requested.toLowerCase());
  await Promise.all([tracing.shutdown(), off.shutdown()]);
});

test('shutdown is idempotent and later flushes resolve', async () => {
  const { tracing } = memoryTracing();
  tracing.withSpan('before', {}, () => undefined);
  await Promise.all([tracing.shutdown(), tracing.shutdown()]);
  await tracing.flush();
  assert.doesNotThrow(() => tracing.withSpan('after', {}, () => undefined));
});
