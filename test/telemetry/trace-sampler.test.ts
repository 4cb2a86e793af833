/**
 * Which spans are recorded (trace-sampler.ts): each continues its parent's
 * decision; one that starts a trace is sampled at `trace_sample_rate`, or at
 * `message_trace_sample_rate` when it is a message-path span.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT_CONTEXT, SpanKind, trace, TraceFlags, type Context } from '@opentelemetry/api';
import { SamplingDecision } from '@opentelemetry/sdk-trace-base';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import { SPANS, API_SPANS } from '../../src/telemetry/span-names.js';
import { newTraceId } from '../../src/telemetry/trace-ids.js';
import { createTraceSampler } from '../../src/telemetry/trace-sampler.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const parent = (flags: TraceFlags): Context => trace.setSpanContext(ROOT_CONTEXT, { traceId: TRACE_ID, spanId: '00f067aa0ba902b7', traceFlags: flags, isRemote: true });
const SAMPLED = parent(TraceFlags.SAMPLED);
const UNSAMPLED = parent(TraceFlags.NONE);

test('calls and messages that start a trace are sampled at their own rates; every other span follows its parent', () => {
  const cases: Array<[string, number, number, string, Context, boolean]> = [
    ['a call starts a trace at trace_sample_rate', 1, 0, API_SPANS.SendMessage, ROOT_CONTEXT, true],
    ['a message starts a trace at message_trace_sample_rate', 1, 0, SPANS.agentExecute, ROOT_CONTEXT, false],
    ['a client message outside a trace, too', 1, 0, SPANS.messagesSend, ROOT_CONTEXT, false],
    ['the message rate, not the call rate', 0, 1, SPANS.agentExecute, ROOT_CONTEXT, true],
    ['a deploy step is sampled as calls are', 0, 1, SPANS.wasmValidate, ROOT_CONTEXT, false],
    ['a message in a sampled trace is sampled whatever its rate', 1, 0, SPANS.messagesSend, SAMPLED, true],
    ['a message in an unsampled trace is not', 1, 1, SPANS.agentExecute, UNSAMPLED, false],
    ['nor is a call in one', 1, 1, API_SPANS.Health, UNSAMPLED, false],
    ['a lifecycle event follows the execution it is part of', 0, 0, SPANS.eventsEmit, SAMPLED, true],
  ];
  for (const [name, callRate, messageRate, spanName, context, sampled] of cases) {
    const sampler = createTraceSampler({ trace_sample_rate: callRate, message_trace_sample_rate: messageRate });
    const { decision } = sampler.shouldSample(context, TRACE_ID, spanName, SpanKind.INTERNAL, {}, []);
    assert.equal(decision, sampled ? SamplingDecision.RECORD_AND_SAMPLED : SamplingDecision.NOT_RECORD, name);
  }
});

test('a fractional rate keeps about that share of new traces', () => {
  // 4,000 random trace ids at 0.25: 1,000 expected, with a standard deviation of about 27.
  const sampler = createTraceSampler({ trace_sample_rate: 1, message_trace_sample_rate: 0.25 });
  let kept = 0;
  for (let i = 0; i < 4_000; i++) {
    if (sampler.shouldSample(ROOT_CONTEXT, newTraceId(), SPANS.agentExecute, SpanKind.CONSUMER, {}, []).decision === SamplingDecision.RECORD_AND_SAMPLED) kept += 1;
  }
  assert.ok(kept > 800 && kept < 1_200, `${kept} of 4000 kept at 0.25`);
});

test('message_trace_sample_rate: 0.01 unless set, a ratio from 0 to 1, and anything else stops the start naming the key', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-sampler-'));
  try {
    const load = (value?: string) =>
      loadConfig({ cwd: dir, env: value === undefined ? {} : { SVC_OBSERVABILITY_MESSAGE_TRACE_SAMPLE_RATE: value } }).observability.message_trace_sample_rate;
    assert.equal(load(), 0.01);
    assert.equal(load('0.5'), 0.5);
    assert.equal(load('0'), 0);
    for (const bad of ['1.5', '-0.1', 'often', ' ']) {
      assert.throws(() => load(bad), (error: unknown) => error instanceof ConfigError && error.key === 'observability.message_trace_sample_rate', bad);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
