/**
 * The REST door's telemetry over real loopback requests: the span of each
 * API route (and none for probes, docs and unknown paths, which still name a
 * trace), WebSocket streams, error bodies and headers naming the span's
 * trace, `svc_http_*`/`svc_websocket_connections` counts and access lines.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { WebSocket } from 'ws';
import type { MetricsSummary } from '../../../src/agents/agent-service-types.js';
import { API_SPANS, SPAN_ATTRIBUTES } from '../../../src/telemetry/span-names.js';
import { spanOf, startTelemetryDoors, type TelemetryDoors } from '../door-telemetry-fixtures.js';
import { call, ECHO_WASM, eventually } from './http-fixtures.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const OTHER_TRACE = '0af7651916cd43dd8448eb211c80319c';
const PARENT_SPAN = '00f067aa0ba902b7';
const UNKNOWN_AGENT = '01J00000000000000000000000';

let doors: TelemetryDoors;
before(async () => {
  doors = await startTelemetryDoors();
});
after(() => doors.stop());

function sampleValue(summary: MetricsSummary, name: string, labels: Record<string, string> = {}): number {
  return summary.samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value ?? 0;
}

/** An upgrade request with a malformed key, written by hand (the ws client would not send one). */
function badHandshake(path: string): Promise<{ status: number; body: string; traceId: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request(`${doors.httpBase}${path}`, { headers: { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': 'short' } });
    req.on('response', (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, traceId: res.headers['x-trace-id'] as string | undefined }));
    });
    req.on('upgrade', () => reject(new Error('upgraded with a malformed key')));
    req.on('error', reject);
    req.end();
  });
}

describe('REST door telemetry', { timeout: 60_000 }, () => {
  it('runs an API route in a SERVER span: route template, status, failure; body, header and span name one trace', async () => {
    const missing = await call(doors.httpBase, 'GET', `/api/v1/agents/${UNKNOWN_AGENT}`);
    assert.equal(missing.status, 404);
    const traceId = missing.body.trace_id as string;
    assert.equal(missing.headers.get('x-trace-id'), traceId);
    const span = await spanOf(doors, API_SPANS.GetAgent, traceId);
    assert.equal(span.kind, SpanKind.SERVER);
    assert.equal(span.status.code, SpanStatusCode.ERROR);
    assert.deepEqual(
      { ...span.attributes },
      {
        [SPAN_ATTRIBUTES.httpMethod]: 'GET',
        [SPAN_ATTRIBUTES.httpRoute]: '/api/v1/agents/{agent_id}',
        [SPAN_ATTRIBUTES.httpStatusCode]: 404,
        [SPAN_ATTRIBUTES.agentId]: UNKNOWN_AGENT,
        [SPAN_ATTRIBUTES.errorCode]: 'NOT_FOUND',
      },
    );
    assert.equal(doors.entries.findLast((e) => e.method === 'get')?.spanId, span.spanContext().spanId, 'the service ran inside the span');
    const line = doors.log.records().find((r) => r.msg === 'http request' && r.trace_id === traceId);
    assert.deepEqual(
      { level: line?.level, method: line?.method, path: line?.path, route: line?.route, status: line?.status, code: line?.code },
      { level: 20, method: 'GET', path: `/api/v1/agents/${UNKNOWN_AGENT}`, route: '/api/v1/agents/{agent_id}', status: 404, code: 'NOT_FOUND' },
      'the access line',
    );
  });

  it('continues a traceparent header; X-Trace-Id wins over it and is echoed by health', async () => {
    const child = await call(doors.httpBase, 'GET', '/api/v1/health', undefined, { traceparent: `00-${TRACE}-${PARENT_SPAN}-01` });
    assert.equal(child.body.trace_id, TRACE);
    const span = await spanOf(doors, API_SPANS.Health, TRACE);
    assert.equal(span.parentSpanContext?.spanId, PARENT_SPAN);

    const chosen = await call(doors.httpBase, 'GET', '/api/v1/health', undefined, { 'X-Trace-Id': OTHER_TRACE, traceparent: `00-${TRACE}-${PARENT_SPAN}-01` });
    assert.equal(chosen.body.trace_id, OTHER_TRACE);
    assert.equal(chosen.headers.get('x-trace-id'), OTHER_TRACE);
    assert.equal((await spanOf(doors, API_SPANS.Health, OTHER_TRACE)).parentSpanContext, undefined);
  });

  it('probes, docs and unknown paths export no span but still name a trace', async () => {
    doors.resetSpans();
    const probe = await call(doors.httpBase, 'GET', '/ready');
    assert.match(probe.headers.get('x-trace-id') ?? '', /^[0-9a-f]{32}$/);
    const nowhere = await call(doors.httpBase, 'GET', '/api/v1/nowhere?access_token=query-secret-e1', undefined, { 'x-trace-id': TRACE });
    assert.equal(nowhere.status, 404);
    assert.equal(nowhere.body.trace_id, TRACE);
    assert.equal(nowhere.headers.get('x-trace-id'), TRACE);
    assert.equal((await call(doors.httpBase, 'GET', '/api/v1/openapi.json')).status, 200);
    assert.deepEqual((await doors.spans()).map((s) => s.name), []);
    assert.ok(doors.log.records().some((r) => r.msg === 'http request' && r.path === '/api/v1/nowhere' && r.trace_id === TRACE && r.route === undefined));
    assert.ok(!doors.log.text().some((line) => line.includes('query-secret-e1')), 'the query string is never logged');
  });

  it('names the receiver of a send and the agent of a deploy and of recent messages', async () => {
    const deployed = await call(doors.httpBase, 'POST', '/api/v1/agents', { name: 'rest-telemetry-echo', wasm_module: ECHO_WASM.toString('base64') });
    assert.equal(deployed.status, 201, deployed.text);
    const agentId = deployed.body.agent_id as string;
    const deploySpan = await spanOf(doors, API_SPANS.DeployAgent, deployed.headers.get('x-trace-id') ?? '');
    assert.equal(deploySpan.attributes[SPAN_ATTRIBUTES.agentId], agentId);
    assert.equal(deploySpan.attributes[SPAN_ATTRIBUTES.agentName], 'rest-telemetry-echo');

    const sent = await call(doors.httpBase, 'POST', `/api/v1/agents/${agentId}/messages`, { message_type: 'request', content: 'hi' });
    assert.equal(sent.status, 202, sent.text);
    const sendSpan = await spanOf(doors, API_SPANS.SendMessage, sent.headers.get('x-trace-id') ?? '');
    assert.equal(sendSpan.attributes[SPAN_ATTRIBUTES.messageReceiver], agentId);
    assert.equal(sendSpan.attributes[SPAN_ATTRIBUTES.httpRoute], '/api/v1/agents/{message.receiver}/messages');

    const recent = await call(doors.httpBase, 'GET', `/api/v1/agents/${agentId}/messages`);
    assert.equal(recent.status, 200, recent.text);
    const recentSpan = await spanOf(doors, API_SPANS.RecentMessages, recent.headers.get('x-trace-id') ?? '');
    assert.equal(recentSpan.attributes[SPAN_ATTRIBUTES.agentId], agentId);
  });

  it('a WebSocket stream is one span from upgrade to close, counted while open; refusals are Error bodies', async () => {
    // A stream filtered by an agent must name one that exists (NOT_FOUND otherwise).
    const deployed = await call(doors.httpBase, 'POST', '/api/v1/agents', { name: 'rest-telemetry-streamed', wasm_module: ECHO_WASM.toString('base64') });
    const streamed = deployed.body.agent_id as string;
    const before = await doors.server.metrics.toSamples();
    const ws = new WebSocket(`ws://${doors.httpAddress}/api/v1/messages?agent_id=${streamed}`, { headers: { 'x-trace-id': TRACE } });
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    assert.equal(sampleValue(await doors.server.metrics.toSamples(), 'svc_websocket_connections'), sampleValue(before, 'svc_websocket_connections') + 1);
    ws.close();
    const span = await spanOf(doors, API_SPANS.SubscribeMessages, TRACE);
    assert.equal(span.attributes[SPAN_ATTRIBUTES.httpStatusCode], 101);
    assert.equal(span.attributes[SPAN_ATTRIBUTES.agentId], streamed);
    await eventually(async () => (sampleValue(await doors.server.metrics.toSamples(), 'svc_websocket_connections') === sampleValue(before, 'svc_websocket_connections') ? true : undefined));

    const refused = await badHandshake('/api/v1/messages');
    assert.equal(refused.status, 400);
    const body = JSON.parse(refused.body) as { code: string; trace_id: string; metadata: Record<string, string> };
    assert.deepEqual([body.code, body.metadata.reason, body.trace_id], ['INVALID_ARGUMENT', 'bad_handshake', refused.traceId]);
    const refusedSpan = await spanOf(doors, API_SPANS.SubscribeMessages, body.trace_id);
    assert.equal(refusedSpan.attributes[SPAN_ATTRIBUTES.errorCode], 'INVALID_ARGUMENT');

    const after = await doors.server.metrics.toSamples();
    assert.equal(sampleValue(after, 'svc_http_requests_total', { method: 'GET', status: '101' }) - sampleValue(before, 'svc_http_requests_total', { method: 'GET', status: '101' }), 1);
    assert.equal(sampleValue(after, 'svc_http_requests_total', { method: 'GET', status: '400' }) - sampleValue(before, 'svc_http_requests_total', { method: 'GET', status: '400' }), 1);
  });

  it('counts requests by method and status, their durations, open connections and bytes', async () => {
    const before = await doors.server.metrics.toSamples();
    await call(doors.httpBase, 'GET', '/api/v1/health');
    await call(doors.httpBase, 'DELETE', `/api/v1/agents/${UNKNOWN_AGENT}`);
    await call(doors.httpBase, 'PURGE', '/api/v1/agents');
    const after = await doors.server.metrics.toSamples();
    const delta = (name: string, labels: Record<string, string> = {}) => sampleValue(after, name, labels) - sampleValue(before, name, labels);
    assert.equal(delta('svc_http_requests_total', { method: 'GET', status: '200' }), 1);
    assert.equal(delta('svc_http_requests_total', { method: 'DELETE', status: '404' }), 1);
    assert.equal(delta('svc_http_requests_total', { method: 'OTHER', status: '405' }), 1, 'a verb outside the bounded set is OTHER');
    assert.ok(!after.samples.some((s) => s.labels.method === 'PURGE'));
    assert.equal(delta('svc_http_request_duration_seconds_count', { method: 'GET' }), 1);
    assert.ok(delta('svc_network_bytes_total') > 0, 'bytes of the requests counted');
    assert.ok(sampleValue(after, 'svc_http_active_connections') >= 0);
  });

  it('GET /api/v1/metrics answers the same registry, and no log line carries a secret', async () => {
    const secret = 'rest-secret-content-4b2e';
    const agents = await call(doors.httpBase, 'GET', '/api/v1/agents');
    const agentId = (agents.body.agents as Array<{ agent_id: string }>)[0]?.agent_id;
    assert.ok(agentId);
    const sent = await call(doors.httpBase, 'POST', '/api/v1/messages', { receiver: agentId, message_type: 'inform', content: secret }, { Authorization: 'Bearer rest-token-51aa' });
    assert.equal(sent.status, 202, sent.text);
    const metrics = await call(doors.httpBase, 'GET', '/api/v1/metrics');
    const names = new Set((metrics.body.samples as Array<{ name: string }>).map((s) => s.name));
    for (const name of ['svc_http_requests_total', 'svc_http_request_duration_seconds_bucket', 'svc_websocket_connections', 'svc_network_bytes_total']) assert.ok(names.has(name), name);
    const lines = doors.log.text();
    for (const forbidden of [secret, 'rest-token-51aa', ECHO_WASM.subarray(0, 32).toString('base64')]) assert.ok(!lines.some((l) => l.includes(forbidden)), forbidden);
  });
});
