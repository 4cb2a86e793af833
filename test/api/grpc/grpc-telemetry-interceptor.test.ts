/**
 * The gRPC door's telemetry over real loopback calls: the span of each RPC
 * (name, kind, parent, attributes, failure), the trace id it gives the
 * service, the trailer, the response headers and the access line, and the
 * `svc_grpc_*` counts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Metadata, status as GrpcStatus, type ClientUnaryCall, type ServiceError } from '@grpc/grpc-js';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { MetricsSummary } from '../../../src/agents/agent-service-types.js';
import { RemoteError } from '../../../src/api/grpc/grpc-client.js';
import { errorFromStatus } from '../../../src/api/grpc/grpc-errors.js';
import { API_SPANS, SPAN_ATTRIBUTES } from '../../../src/telemetry/span-names.js';
import { ECHO_WASM } from '../http/http-fixtures.js';
import { spanOf, startTelemetryDoors, type TelemetryDoors } from '../door-telemetry-fixtures.js';
import { rawClient, SUITE_TIMEOUT } from './grpc-harness.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const OTHER_TRACE = '0af7651916cd43dd8448eb211c80319c';
const PARENT_SPAN = '00f067aa0ba902b7';
const UNKNOWN_AGENT = '01J00000000000000000000000';

let doors: TelemetryDoors;
before(async () => {
  doors = await startTelemetryDoors();
});
after(() => doors.stop());

interface RawAnswer {
  error: ServiceError | null;
  value: unknown;
  /** Response headers, when the server sent any before its status. */
  headers: Metadata | undefined;
}

/** A unary call with hand-made metadata, keeping the response headers. */
function rawUnary(method: string, request: unknown, entries: Record<string, string>): Promise<RawAnswer> {
  const client = rawClient(doors.grpcAddress);
  const metadata = new Metadata();
  for (const [key, value] of Object.entries(entries)) metadata.set(key, value);
  return new Promise((resolve) => {
    let headers: Metadata | undefined;
    const call = client[method]?.(request, metadata, (error: ServiceError | null, value: unknown) => {
      client.close();
      resolve({ error, value, headers });
    }) as ClientUnaryCall;
    call.on('metadata', (md: Metadata) => (headers = md));
  });
}

function sampleValue(summary: MetricsSummary, name: string, labels: Record<string, string> = {}): number {
  const found = summary.samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return found?.value ?? 0;
}

describe('gRPC door telemetry', SUITE_TIMEOUT, () => {
  it('runs every RPC in a SERVER span named from API_SPANS, active when the service runs', async () => {
    const health = await doors.client.health();
    const span = await spanOf(doors, API_SPANS.Health, health.trace_id);
    assert.equal(span.kind, SpanKind.SERVER);
    assert.deepEqual(
      { ...span.attributes },
      {
        [SPAN_ATTRIBUTES.rpcSystem]: 'grpc',
        [SPAN_ATTRIBUTES.rpcService]: 'svc.v1.ManagementService',
        [SPAN_ATTRIBUTES.rpcMethod]: 'Health',
        [SPAN_ATTRIBUTES.grpcStatusCode]: GrpcStatus.OK,
      },
    );
    assert.equal(span.parentSpanContext, undefined, 'a call without trace context starts a trace');
    const entry = doors.entries.findLast((e) => e.method === 'health');
    assert.deepEqual(entry, { method: 'health', traceId: health.trace_id, spanId: span.spanContext().spanId });
  });

  it('continues the caller\'s traceparent; x-trace-id wins over it and is echoed as sent; one that is no trace id is echoed but names no trace', async () => {
    const child = await rawUnary('Health', {}, { traceparent: `00-${TRACE}-${PARENT_SPAN}-01` });
    assert.equal((child.value as { trace_id: string }).trace_id, TRACE);
    const span = await spanOf(doors, API_SPANS.Health, TRACE);
    assert.equal(span.parentSpanContext?.spanId, PARENT_SPAN);
    assert.equal(span.parentSpanContext?.isRemote, true);
    assert.equal(child.headers?.get('x-trace-id')[0], TRACE, 'the response headers name the trace');

    const chosen = await rawUnary('Health', {}, { 'x-trace-id': OTHER_TRACE.toUpperCase(), traceparent: `00-${TRACE}-${PARENT_SPAN}-01` });
    assert.equal((chosen.value as { trace_id: string }).trace_id, OTHER_TRACE.toUpperCase(), 'echoed as sent');
    assert.equal(chosen.headers?.get('x-trace-id')[0], OTHER_TRACE.toUpperCase());
    const chosenSpan = await spanOf(doors, API_SPANS.Health, OTHER_TRACE);
    assert.equal(chosenSpan.parentSpanContext, undefined);
    assert.equal(chosenSpan.attributes[SPAN_ATTRIBUTES.clientTraceId], undefined, 'the same id in other case is the trace id itself');

    const requestId = 'req-7f3c2a91';
    const own = await rawUnary('Health', {}, { 'x-trace-id': requestId, traceparent: `00-${TRACE}-${PARENT_SPAN}-01` });
    assert.equal((own.value as { trace_id: string }).trace_id, requestId, 'echoed as sent');
    assert.equal(own.headers?.get('x-trace-id')[0], requestId);
    const spans = await doors.spans();
    const ownSpan = spans.find((s) => s.name === API_SPANS.Health && s.attributes[SPAN_ATTRIBUTES.clientTraceId] === requestId);
    assert.ok(ownSpan, 'the span keeps the client\'s id');
    assert.equal(ownSpan.spanContext().traceId, TRACE, 'a traceparent still names the trace');
    const line = doors.log.records().find((r) => r.msg === 'grpc call' && r.client_trace_id === requestId);
    assert.equal(line?.trace_id, TRACE, 'the access line names both');

    const failed = await rawUnary('GetAgent', { agent_id: UNKNOWN_AGENT }, { 'x-trace-id': requestId });
    assert.ok(failed.error);
    assert.equal(errorFromStatus(failed.error).trace_id, requestId, 'the error trailer echoes it too');
  });

  it('a failure: the trailer, the span and the access line name the same trace and code', async () => {
    const { error } = await rawUnary('GetAgent', { agent_id: UNKNOWN_AGENT }, {});
    assert.ok(error);
    const body = errorFromStatus(error);
    assert.equal(body.code, 'NOT_FOUND');
    const span = await spanOf(doors, API_SPANS.GetAgent, body.trace_id);
    assert.equal(span.status.code, SpanStatusCode.ERROR);
    assert.equal(span.attributes[SPAN_ATTRIBUTES.errorCode], 'NOT_FOUND');
    assert.equal(span.attributes[SPAN_ATTRIBUTES.agentId], UNKNOWN_AGENT);
    assert.equal(span.attributes[SPAN_ATTRIBUTES.grpcStatusCode], GrpcStatus.NOT_FOUND);
    assert.deepEqual(span.events.map((e) => e.name), ['exception']);
    const line = doors.log.records().find((r) => r.msg === 'grpc call' && r.trace_id === body.trace_id);
    assert.ok(line, 'an access line for the call');
    assert.deepEqual(
      { level: line.level, rpc: line.rpc, status: line.status, code: line.code },
      { level: 20, rpc: 'GetAgent', status: 'NOT_FOUND', code: 'NOT_FOUND' },
    );
    assert.equal(typeof line.duration_ms, 'number');
  });

  it('a deploy names the agent on its span, and the service ran inside it', async () => {
    const { agent_id } = await doors.client.deploy({ name: 'grpc-telemetry-echo', wasm_module: ECHO_WASM });
    const span = (await doors.spans()).find((s) => s.name === API_SPANS.DeployAgent && s.attributes[SPAN_ATTRIBUTES.agentId] === agent_id);
    assert.ok(span, 'svc.api.deploy_agent with svc.agent.id');
    assert.equal(span.attributes[SPAN_ATTRIBUTES.agentName], 'grpc-telemetry-echo');
    const entry = doors.entries.findLast((e) => e.method === 'deploy');
    assert.equal(entry?.spanId, span.spanContext().spanId);

    const sent = await doors.client.send({ receiver: agent_id, message_type: 'request', content: 'hello' });
    assert.match(sent.message_id, /^[0-9A-Z]{26}$/);
    const send = (await doors.spans()).find((s) => s.name === API_SPANS.SendMessage && s.attributes[SPAN_ATTRIBUTES.messageReceiver] === agent_id);
    assert.ok(send, 'svc.api.send_message with svc.message.receiver');
    assert.equal(doors.entries.findLast((e) => e.method === 'send')?.spanId, send.spanContext().spanId);
  });

  it('counts calls by RPC and status, unary durations, and open streams; a stream\'s span lasts as long as it', async () => {
    // A stream filtered by an agent must name one that exists (NOT_FOUND otherwise).
    const { agent_id: streamed } = await doors.client.deploy({ name: 'grpc-telemetry-streamed', wasm_module: ECHO_WASM });
    const before = await doors.server.metrics.toSamples();
    await doors.client.health();
    await assert.rejects(doors.client.get(UNKNOWN_AGENT), RemoteError);
    const stream = doors.client.subscribe({ agent_id: streamed });
    stream.on('error', () => undefined);
    await new Promise((resolve) => stream.once('metadata', resolve));
    const open = await doors.server.metrics.toSamples();
    assert.equal(sampleValue(open, 'svc_grpc_active_streams'), sampleValue(before, 'svc_grpc_active_streams') + 1);
    stream.cancel();

    const streamSpan = await spanOf(doors, API_SPANS.SubscribeMessages);
    assert.equal(streamSpan.attributes[SPAN_ATTRIBUTES.agentId], streamed);
    assert.equal(streamSpan.attributes[SPAN_ATTRIBUTES.grpcStatusCode], GrpcStatus.CANCELLED);
    assert.equal(streamSpan.status.code, SpanStatusCode.UNSET, 'a client ending its stream is no failure');
    const after = await doors.server.metrics.toSamples();
    const delta = (name: string, labels: Record<string, string>) => sampleValue(after, name, labels) - sampleValue(before, name, labels);
    assert.equal(delta('svc_grpc_requests_total', { method: 'Health', status: 'OK' }), 1);
    assert.equal(delta('svc_grpc_requests_total', { method: 'GetAgent', status: 'NOT_FOUND' }), 1);
    assert.equal(delta('svc_grpc_requests_total', { method: 'SubscribeMessages', status: 'CANCELLED' }), 1);
    assert.equal(delta('svc_grpc_request_duration_seconds_count', { method: 'Health' }), 1);
    assert.equal(delta('svc_grpc_request_duration_seconds_count', { method: 'SubscribeMessages' }), 0, 'streams have no duration');
    assert.equal(sampleValue(after, 'svc_grpc_active_streams'), sampleValue(before, 'svc_grpc_active_streams'));
  });

  it('one access line per call, at debug, carrying its trace id and never a module or message content', async () => {
    const secret = 'grpc-secret-content-7f3a';
    const { agent_id } = await doors.client.deploy({ name: 'grpc-telemetry-quiet', wasm_module: ECHO_WASM });
    const { message_id } = await doors.client.send({ receiver: agent_id, message_type: 'inform', content: secret, metadata: { authorization: 'Bearer grpc-token-9c1d' } });
    assert.ok(message_id);
    const lines = doors.log.text();
    for (const forbidden of [secret, 'grpc-token-9c1d', ECHO_WASM.subarray(0, 32).toString('base64')]) {
      assert.ok(!lines.some((line) => line.includes(forbidden)), `no log line contains ${forbidden}`);
    }
    const access = doors.log.records().filter((r) => r.msg === 'grpc call');
    assert.ok(access.every((r) => r.level === 20 && typeof r.trace_id === 'string' && /^[0-9a-f]{32}$/.test(r.trace_id)));
    const deploy = access.filter((r) => r.rpc === 'DeployAgent');
    const spans = (await doors.spans()).filter((s) => s.name === API_SPANS.DeployAgent);
    assert.ok(deploy.length >= 1);
    for (const line of deploy) assert.ok(spans.some((s) => s.spanContext().traceId === line.trace_id), 'each access line names its call\'s trace');
  });

  it('the Metrics RPC answers the registry the metrics listener serves', async () => {
    const summary = await doors.client.metrics();
    const text = await doors.server.metrics.registry.metrics();
    const names = new Set(summary.samples.map((s) => s.name));
    for (const name of ['svc_grpc_requests_total', 'svc_grpc_request_duration_seconds_bucket', 'svc_agents_total', 'svc_http_active_connections']) {
      assert.ok(names.has(name), `${name} in the Metrics answer`);
      assert.match(text, new RegExp(`^${name}`, 'm'), `${name} in the Prometheus text`);
    }
    const metricsSpan = await spanOf(doors, API_SPANS.Metrics);
    assert.equal(metricsSpan.kind, SpanKind.SERVER);
  });
});
