/**
 * Spans made through our helpers reach a collector started by the test, over
 * OTLP/HTTP and OTLP/gRPC, and a collector that is down or silent never
 * slows the code that makes spans.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as tick } from 'node:timers/promises';
import { API_SPANS, SPAN_ATTRIBUTES, SPANS } from '../../src/telemetry/span-names.js';
import { extractHttpHeaders } from '../../src/telemetry/trace-context.js';
import { createTracing, type Tracing } from '../../src/telemetry/tracing.js';
import { closedPort, startGrpcReceiver, startHttpReceiver, startSilentCollector, type Receiver } from './otlp-receiver.js';
import { capturedLogger, tracingConfig } from './telemetry-fixtures.js';

const DEPLOY_CHILDREN = [SPANS.wasmValidate, SPANS.runtimeCreate, SPANS.registryRegister, SPANS.eventsEmit];

async function deploy(tracing: Tracing): Promise<void> {
  await tracing.withSpan(API_SPANS.DeployAgent, { [SPAN_ATTRIBUTES.agentName]: 'echo' }, async () => {
    for (const name of DEPLOY_CHILDREN) await tracing.withSpan(name, {}, () => tick());
  });
}

async function assertDeployTree(receiver: Receiver, version: string): Promise<void> {
  const spans = await receiver.waitForSpans(5);
  const root = spans.find((s) => s.name === API_SPANS.DeployAgent);
  assert.ok(root, 'the deploy span arrived');
  assert.equal(root.parentSpanId, '');
  assert.equal(root.attributes[SPAN_ATTRIBUTES.agentName], 'echo');
  assert.match(root.traceId, /^[0-9a-f]{32}$/);
  const children = spans.filter((s) => s !== root);
  assert.deepEqual(children.map((s) => s.name), DEPLOY_CHILDREN, 'children in order');
  for (const child of children) {
    assert.equal(child.parentSpanId, root.spanId);
    assert.equal(child.traceId, root.traceId);
  }
  for (const span of spans) {
    assert.equal(span.scope, 'svc');
    assert.equal(span.resource['service.name'], 'svc-under-test');
    assert.equal(span.resource['service.version'], version);
    assert.equal(span.resource['deployment.environment.name'], 'staging');
    assert.equal(span.resource['deployment.environment'], 'staging');
  }
}

test('OTLP/HTTP: the deploy span tree arrives as protobuf with names, parents and resource attributes', async () => {
  const receiver = await startHttpReceiver();
  const tracing = createTracing(
    tracingConfig({ otlp_endpoint: receiver.url, service_name: 'svc-under-test', deployment_environment: 'staging', otlp_headers: { 'x-tenant': 't1' } }),
    { serviceVersion: '1.2.3' },
  );
  try {
    assert.equal(tracing.exporting, true);
    await deploy(tracing);
    await tracing.flush();
    await assertDeployTree(receiver, '1.2.3');
    assert.ok(receiver.contentTypes.length > 0 && receiver.contentTypes.every((type) => type === 'application/x-protobuf'), receiver.contentTypes.join());
  } finally {
    await tracing.shutdown();
    await receiver.close();
  }
});

test('OTLP/gRPC: the same tree arrives over grpc://, service_version from the config', async () => {
  const receiver = await startGrpcReceiver();
  const tracing = createTracing(
    tracingConfig({ otlp_endpoint: receiver.url, service_name: 'svc-under-test', deployment_environment: 'staging', service_version: '2.0.0-rc.1' }),
    { serviceVersion: '1.2.3' },
  );
  await deploy(tracing);
  await tracing.flush();
  await assertDeployTree(receiver, '2.0.0-rc.1');
  await tracing.shutdown();
  await receiver.close();
});

test('sampling: 1.0 exports every root, 0.0 none, and 0.0 still follows a sampled remote parent', async () => {
  const receiver = await startHttpReceiver();
  const all = createTracing(tracingConfig({ otlp_endpoint: receiver.url, trace_sample_rate: 1 }), { serviceVersion: '1' });
  for (let i = 0; i < 20; i++) all.withSpan('all', {}, () => undefined);
  await all.flush();
  await receiver.waitForSpans(20);

  const none = createTracing(tracingConfig({ otlp_endpoint: receiver.url, trace_sample_rate: 0 }), { serviceVersion: '1' });
  const ids = new Set<string | undefined>();
  for (let i = 0; i < 20; i++) ids.add(none.withSpan('none', {}, () => none.currentTraceId()));
  assert.equal(ids.size, 20, 'unsampled spans still have distinct trace ids');
  const remoteTrace = '0af7651916cd43dd8448eb211c80319c';
  const remoteSpan = 'b7ad6b7169203331';
  const parent = extractHttpHeaders({ traceparent: `00-${remoteTrace}-${remoteSpan}-01` });
  none.withSpan('followed', {}, () => undefined, { parent });
  await none.flush();

  const spans = await receiver.waitForSpans(21);
  assert.equal(spans.filter((s) => s.name === 'all').length, 20);
  assert.equal(spans.filter((s) => s.name === 'none').length, 0);
  const followed = spans.find((s) => s.name === 'followed');
  assert.equal(followed?.traceId, remoteTrace);
  assert.equal(followed?.parentSpanId, remoteSpan);
  await Promise.all([all.shutdown(), none.shutdown()]);
  await receiver.close();
});

test('a collector that is down never slows withSpan, and its failures are logged once per interval', async () => {
  const { log, capture } = capturedLogger();
  const tracing = createTracing(tracingConfig({ otlp_endpoint: `http://127.0.0.1:${await closedPort()}`, otlp_timeout: 1_000 }), { serviceVersion: '1', log });
  const spansPerRound = 2_000; // several export batches per round
  for (let round = 0; round < 3; round++) {
    const started = performance.now();
    for (let i = 0; i < spansPerRound; i++) tracing.withSpan(API_SPANS.Health, {}, () => i);
    const elapsed = performance.now() - started;
    // About 5 µs a span here; the bound only catches a span waiting on the network.
    assert.ok(elapsed < 2_000, `${spansPerRound} spans took ${elapsed.toFixed(0)} ms`);
    await tracing.flush();
  }
  const failures = capture.records().filter((r) => r.msg === 'trace export failed; the spans of that batch are dropped');
  assert.equal(failures.length, 1, 'one report for many failed batches');
  assert.equal(failures[0]?.level, 40);
  assert.match(String(failures[0]?.endpoint), /^http:\/\/127\.0\.0\.1:\d+$/);
  await tracing.shutdown();
});

test('a collector that never answers costs at most otlp_timeout, at flush and at shutdown', async () => {
  const silent = await startSilentCollector();
  const tracing = createTracing(tracingConfig({ otlp_endpoint: silent.url, otlp_timeout: 300 }), { serviceVersion: '1' });
  const started = performance.now();
  for (let i = 0; i < 100; i++) tracing.withSpan(API_SPANS.Health, {}, () => i);
  assert.ok(performance.now() - started < 1_000);
  const flushStarted = performance.now();
  await tracing.flush();
  tracing.withSpan(API_SPANS.Health, {}, () => undefined);
  await tracing.shutdown();
  const waited = performance.now() - flushStarted;
  assert.ok(waited < 3_000, `flush and shutdown took ${waited.toFixed(0)} ms with otlp_timeout 300 ms`);
  await silent.close();
});
