/** The rules both doors share (src/api/api-call.ts), without a server. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { context, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { apiOperation, beginCall, callContext, describeRequest, describeResponse, logAccess, ANONYMOUS_PRINCIPAL } from '../../src/api/api-call.js';
import { SvcError } from '../../src/errors/svc-error.js';
import { API_SPANS, SPAN_ATTRIBUTES } from '../../src/telemetry/span-names.js';
import { extractHttpHeaders } from '../../src/telemetry/trace-context.js';
import { capturedLogger, memoryTracing, parentOf } from '../telemetry/telemetry-fixtures.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';

describe('beginCall', () => {
  it('an RPC: a SERVER span named from API_SPANS under the caller\'s context, ended once', async () => {
    const { tracing, spans } = memoryTracing();
    const call = beginCall(tracing, 'GetAgent', extractHttpHeaders({ traceparent: `00-${TRACE}-${PARENT}-01` }), { a: 1 });
    assert.equal(call.traceId, TRACE);
    context.with(call.context, () => assert.equal(callContext().trace_id, TRACE));
    call.fail(new SvcError('NOT_FOUND', 'no such agent'));
    call.fail(new SvcError('INTERNAL', 'later failures do not replace the first'));
    call.end();
    call.end();
    const [span, ...more] = await spans();
    assert.equal(more.length, 0);
    assert.equal(span?.name, API_SPANS.GetAgent);
    assert.equal(span?.kind, SpanKind.SERVER);
    assert.equal(parentOf(span!), PARENT);
    assert.equal(span?.status.code, SpanStatusCode.ERROR);
    assert.equal(span?.attributes[SPAN_ATTRIBUTES.errorCode], 'NOT_FOUND');
    assert.equal(call.failure?.code, 'NOT_FOUND');
  });

  it('no RPC: nothing recorded, but the trace id of the caller, of x-trace-id, or a new one', async () => {
    const { tracing, spans } = memoryTracing();
    assert.equal(beginCall(tracing, undefined, extractHttpHeaders({ traceparent: `00-${TRACE}-${PARENT}-01` }), {}).traceId, TRACE);
    assert.equal(beginCall(tracing, undefined, extractHttpHeaders({ 'x-trace-id': TRACE }), {}).traceId, TRACE);
    const fresh = beginCall(tracing, undefined, extractHttpHeaders({}), {});
    assert.match(fresh.traceId, /^[0-9a-f]{32}$/);
    assert.equal(fresh.span.isRecording(), false);
    fresh.end();
    assert.deepEqual(await spans(), []);
  });

  it('x-trace-id gives an RPC\'s root span exactly that trace id', () => {
    const { tracing } = memoryTracing();
    assert.equal(beginCall(tracing, 'Health', extractHttpHeaders({ 'x-trace-id': TRACE.toUpperCase() }), {}).traceId, TRACE);
  });
});

describe('callContext', () => {
  it('the anonymous principal, the active trace and the deadline given', () => {
    const { tracing } = memoryTracing();
    tracing.withSpan('svc.test', {}, (span) => {
      assert.deepEqual(callContext(123), { principal: ANONYMOUS_PRINCIPAL, trace_id: span.spanContext().traceId, deadline: 123 });
    });
    assert.match(callContext().trace_id, /^[0-9a-f]{32}$/, 'a new trace outside any span');
  });
});

describe('apiOperation', () => {
  it('names of API_SPANS only', () => {
    assert.equal(apiOperation('DeployAgent'), 'DeployAgent');
    for (const name of ['Deploy', 'toString', 'constructor', '']) assert.equal(apiOperation(name), undefined, name);
  });
});

describe('describeRequest and describeResponse', () => {
  const cases: Array<[Parameters<typeof describeRequest>[1], unknown, Record<string, unknown>]> = [
    ['DeployAgent', { name: 'a', wasm_module: new Uint8Array([0, 97, 115, 109]) }, { [SPAN_ATTRIBUTES.agentName]: 'a' }],
    ['GetAgent', { agent_id: 'x' }, { [SPAN_ATTRIBUTES.agentId]: 'x' }],
    ['UndeployAgent', { agent_id: '' }, {}],
    ['SendMessage', { message: { receiver: 'r', content: 'secret' } }, { [SPAN_ATTRIBUTES.messageReceiver]: 'r' }],
    ['SubscribeMessages', { filter: { agent_id: 'f' } }, { [SPAN_ATTRIBUTES.agentId]: 'f' }],
    ['RecentMessages', { filter: null }, {}],
    ['Health', {}, {}],
    [undefined, { agent_id: 'x' }, {}],
  ];
  for (const [operation, request, expected] of cases) {
    it(`${operation ?? 'no RPC'}: ${JSON.stringify(expected)}, never a module or content`, async () => {
      const { tracing, spans } = memoryTracing();
      const span = tracing.startSpan('svc.test');
      describeRequest(span, operation, request);
      span.end();
      const [finished] = await spans();
      assert.deepEqual({ ...finished?.attributes }, expected);
    });
  }

  it('a deploy\'s answer names the agent', async () => {
    const { tracing, spans } = memoryTracing();
    const span = tracing.startSpan('svc.test');
    describeResponse(span, 'DeployAgent', { agent_id: 'new' });
    describeResponse(span, 'GetAgent', { agent_id: 'other' });
    span.end();
    assert.deepEqual({ ...(await spans())[0]?.attributes }, { [SPAN_ATTRIBUTES.agentId]: 'new' });
  });
});

describe('logAccess', () => {
  it('writes at debug only, and builds its fields only then', () => {
    let built = 0;
    const fields = () => {
      built++;
      return { trace_id: TRACE };
    };
    const quiet = capturedLogger({ level: 'info' });
    logAccess(quiet.log, 'http request', fields);
    assert.equal(built, 0);
    assert.deepEqual(quiet.capture.records(), []);
    const loud = capturedLogger({ level: 'debug' });
    logAccess(loud.log, 'http request', fields);
    assert.equal(built, 1);
    assert.deepEqual(loud.capture.records().map((r) => [r.level, r.msg, r.trace_id]), [[20, 'http request', TRACE]]);
  });
});
