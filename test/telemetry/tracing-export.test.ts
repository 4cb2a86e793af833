/**
 * Spans made through our helpers reach a collector started by the test, over
 * OTLP/HTTP and OTLP/gRPC, as protobuf; a collector that is down costs a log
 * line per interval, and one that is silent holds the stop for
 * `otlp_timeout` once.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as tick } from 'node:timers/promises';
import { API_SPANS, SPAN_ATTRIBUTES, SPANS } from '../../src/telemetry/span-names.js';
import { extractHttpHeaders } from '../../src/telemetry/trace-context.js';
import { createSimulatedClock } from '../../supervisors/index.js';
import { EXPORT_FAILURE_LOG_INTERVAL_MS, TRACE_EXPORT_MESSAGES } from '../../src/telemetry/export-reporter.js';
import { EXPORT_BATCH_SPANS } from '../../src/telemetry/span-export.js';
import { createTracing, EXPORT_CUT_SHORT_MESSAGE, type Tracing } from '../../src/telemetry/tracing.js';
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

test('a collector that is down: every span still ends at once, and its failures are logged once per interval', async () => {
  const { log, capture } = capturedLogger();
  const clock = createSimulatedClock();
  const tracing = createTracing(tracingConfig({ otlp_endpoint: `http://127.0.0.1:${await closedPort()}`, otlp_timeout: 300 }), { serviceVersion: '1', log, clock });
  // Several export batches a round; the reporter's interval does not pass between them.
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i < 2 * EXPORT_BATCH_SPANS; i++) tracing.withSpan(API_SPANS.Health, {}, () => i);
    await tracing.flush();
  }
  const failures = () => capture.records().filter((r) => r.msg === TRACE_EXPORT_MESSAGES.failed);
  assert.equal(failures().length, 1, 'one report for many failed batches');
  assert.equal(failures()[0]?.level, 40);
  assert.match(String(failures()[0]?.endpoint), /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.match(String(failures()[0]?.reason), /ECONNREFUSED/);
  clock.increment(EXPORT_FAILURE_LOG_INTERVAL_MS);
  tracing.withSpan(API_SPANS.Health, {}, () => undefined);
  await tracing.flush();
  assert.equal(failures().length, 2, 'and again once the interval has passed');
  assert.ok(Number(failures()[1]?.failures_since_last_report) > 1, 'counting the failures in between');
  await tracing.shutdown();
});

test('a collector that never answers holds the stop for otlp_timeout once; the spans still queued are dropped and said so', async () => {
  const silent = await startSilentCollector();
  const { log, capture } = capturedLogger();
  const clock = createSimulatedClock();
  const otlpTimeout = 5_000;
  const tracing = createTracing(tracingConfig({ otlp_endpoint: silent.url, otlp_timeout: otlpTimeout }), { serviceVersion: '1', log, clock });
  try {
    for (let i = 0; i < 100; i++) tracing.withSpan(API_SPANS.Health, {}, () => i);
    let stopped = false;
    const stopping = tracing.shutdown().then(() => {
      stopped = true;
    });
    await silent.holding(1, '/v1/traces');
    await clock.advance(otlpTimeout - 1);
    assert.equal(stopped, false, 'waiting on the collector');
    await clock.advance(1);
    await stopping;
    const [line] = capture.records().filter((r) => r.msg === EXPORT_CUT_SHORT_MESSAGE);
    assert.deepEqual([line?.level, line?.otlp_timeout_ms], [40, otlpTimeout]);
    assert.equal(tracing.shutdown(), tracing.shutdown(), 'one stop, however often asked');
  } finally {
    silent.release();
    await silent.close();
  }
});
