/**
 * OTLP metric export (src/telemetry/metrics-export.ts): the registry pushed
 * as protobuf to real collectors on 127.0.0.1 over OTLP/HTTP and OTLP/gRPC,
 * each interval of the injected clock and once more at shutdown, from a
 * whole server too; a collector that is down costs one log line and never
 * fails a call; a silent one holds the stop for `otlp_timeout` once; and no
 * export without `enable_metrics` or an endpoint.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { createSimulatedClock } from '../../supervisors/index.js';
import { ConfigError } from '../../src/config/load.js';
import { METRIC_EXPORT_MESSAGES } from '../../src/telemetry/export-reporter.js';
import { REQUEST_BUCKETS, METRICS } from '../../src/telemetry/metric-catalog.js';
import { createMetricsExport, metricsEndpoint, type MetricsExportConfig } from '../../src/telemetry/metrics-export.js';
import { createMetrics } from '../../src/telemetry/metrics.js';
import { VERSION } from '../../src/version.js';
import { example, rest, startObservedServer } from '../observability/observability-fixtures.js';
import { metricNamed, OTLP_CUMULATIVE, pointWith, startGrpcMetricsReceiver, startHttpMetricsReceiver } from './otlp-metrics-receiver.js';
import { closedPort, startSilentCollector } from './otlp-receiver.js';
import { capturedLogger } from './telemetry-fixtures.js';

function exportConfig(overrides: Partial<MetricsExportConfig> = {}): MetricsExportConfig {
  return {
    enable_metrics: true,
    otlp_endpoint: '',
    otlp_timeout: 5_000,
    otlp_headers: {},
    metrics_export_interval: 60_000,
    service_name: 'svc',
    service_version: '',
    deployment_environment: 'test',
    ...overrides,
  };
}

test('the metrics endpoint: /v1/metrics beside /v1/traces over HTTP, the same address over gRPC', () => {
  assert.deepEqual(metricsEndpoint({ protocol: 'http', url: 'http://collector:4318/v1/traces' }), { protocol: 'http', url: 'http://collector:4318/v1/metrics' });
  assert.deepEqual(metricsEndpoint({ protocol: 'http', url: 'https://otlp.example.com/otlp/v1/traces?key=k' }), {
    protocol: 'http',
    url: 'https://otlp.example.com/otlp/v1/metrics?key=k',
  });
  assert.deepEqual(metricsEndpoint({ protocol: 'grpc', url: 'https://collector:4317' }), { protocol: 'grpc', url: 'https://collector:4317' });
});

test('no export without enable_metrics or without an endpoint; an interval of 0 with both is refused', async () => {
  const receiver = await startHttpMetricsReceiver();
  try {
    const clock = createSimulatedClock();
    const registry = createMetrics({ nodeMetrics: false }).registry;
    const off = createMetricsExport(exportConfig({ enable_metrics: false, otlp_endpoint: receiver.url, metrics_export_interval: 20 }), { registry, serviceVersion: '1', clock });
    const nowhere = createMetricsExport(exportConfig({ otlp_endpoint: '', metrics_export_interval: 20 }), { registry, serviceVersion: '1', clock });
    assert.equal(off.exporting, false);
    assert.equal(nowhere.exporting, false);
    assert.equal(clock.pendingTimers(), 0, 'no timer armed');
    await off.exportNow();
    await Promise.all([off.shutdown(), nowhere.shutdown()]);
    assert.equal(receiver.exports.length, 0);
    assert.throws(
      () => createMetricsExport(exportConfig({ otlp_endpoint: receiver.url, metrics_export_interval: 0 }), { registry, serviceVersion: '1', clock }),
      (error: unknown) => error instanceof ConfigError && error.key === 'observability.metrics_export_interval',
    );
  } finally {
    await receiver.close();
  }
});

test('OTLP/HTTP: protobuf each interval of the injected clock, cumulative, and one last export at shutdown', async () => {
  const receiver = await startHttpMetricsReceiver();
  const clock = createSimulatedClock();
  const metrics = createMetrics({ nodeMetrics: false, clock });
  const exporter = createMetricsExport(exportConfig({ otlp_endpoint: receiver.url, metrics_export_interval: 60_000 }), { registry: metrics.registry, serviceVersion: '1', clock });
  try {
    metrics.agentsDeployed.inc();
    await clock.advance(60_000);
    await receiver.waitForExports(1);
    assert.deepEqual(receiver.contentTypes, ['application/x-protobuf']);
    metrics.agentsDeployed.inc();
    // After the export in flight: the figures as they are now.
    await exporter.exportNow();
    assert.equal(receiver.exports.length, 2);
    assert.equal(metricNamed(receiver.exports[1]!, METRICS.agentsDeployed.name)?.points[0]?.value, 2, 'cumulative');
    await clock.advance(60_000);
    await receiver.waitForExports(3);
    await exporter.shutdown();
    assert.equal(receiver.exports.length, 4, 'one last export at shutdown');
    assert.equal(clock.pendingTimers(), 0, 'the timer is gone');
  } finally {
    await exporter.shutdown();
    await receiver.close();
  }
});

test('OTLP/gRPC: the svc_* registry arrives as protobuf with metadata and the resource', { timeout: 30_000 }, async () => {
  const receiver = await startGrpcMetricsReceiver();
  const metrics = createMetrics({ nodeMetrics: false });
  const exporter = createMetricsExport(
    exportConfig({ otlp_endpoint: receiver.url, otlp_headers: { 'X-Tenant': 't1' }, service_name: 'svc-grpc', service_version: '2.0.0-rc.1', deployment_environment: 'staging' }),
    { registry: metrics.registry, serviceVersion: '1.2.3', clock: createSimulatedClock() },
  );
  try {
    assert.equal(exporter.exporting, true);
    metrics.agentsDeployed.inc();
    metrics.recordGrpcCall('/svc.v1.ManagementService/DeployAgent', grpc.status.OK, 0.004);
    metrics.recordExecution('success', 0.0002);
    await exporter.exportNow();
    assert.equal(receiver.exports.length, 1);
    const [first] = receiver.exports;
    assert.equal(receiver.tenants[0], 't1');

    const deployed = metricNamed(first!, METRICS.agentsDeployed.name);
    assert.equal(deployed?.kind, 'sum');
    assert.equal(deployed?.monotonic, true);
    assert.equal(deployed?.temporality, OTLP_CUMULATIVE);
    assert.equal(deployed?.points[0]?.value, 1);
    assert.equal(pointWith(metricNamed(first!, METRICS.grpcRequests.name), { method: 'DeployAgent', status: 'OK' })?.value, 1);

    const duration = metricNamed(first!, METRICS.grpcRequestDuration.name);
    assert.equal(duration?.kind, 'histogram');
    assert.equal(duration?.temporality, OTLP_CUMULATIVE);
    assert.equal(duration?.unit, 's');
    const point = pointWith(duration, { method: 'DeployAgent' });
    assert.deepEqual(point?.explicitBounds, [...REQUEST_BUCKETS]);
    assert.equal(point?.bucketCounts?.length, REQUEST_BUCKETS.length + 1);
    assert.equal(point?.bucketCounts?.[REQUEST_BUCKETS.indexOf(0.005)], 1, 'the 4 ms call is in the (2.5 ms, 5 ms] bucket');
    assert.equal(point?.count, 1);
    assert.equal(metricNamed(first!, METRICS.agentExecutionDuration.name)?.points[0]?.count, 1);
    assert.equal(metricNamed(first!, METRICS.agentsActive.name)?.kind, 'gauge');

    for (const metric of first!) {
      assert.equal(metric.scope, 'svc');
      assert.equal(metric.resource['service.name'], 'svc-grpc');
      assert.equal(metric.resource['service.version'], '2.0.0-rc.1');
      assert.equal(metric.resource['deployment.environment.name'], 'staging');
      assert.equal(metric.resource['deployment.environment'], 'staging');
    }
    await exporter.shutdown();
    assert.equal(receiver.exports.length, 2, 'one last export at shutdown');
    await exporter.exportNow();
    assert.equal(receiver.exports.length, 2, 'nothing after shutdown');
  } finally {
    await exporter.shutdown();
    await receiver.close();
  }
});

test('a silent collector holds shutdown for otlp_timeout of the injected clock, no longer', async () => {
  const silent = await startSilentCollector();
  const clock = createSimulatedClock();
  const exporter = createMetricsExport(exportConfig({ otlp_endpoint: silent.url, otlp_timeout: 5_000, metrics_export_interval: 1_000 }), {
    registry: createMetrics({ nodeMetrics: false }).registry,
    serviceVersion: '1',
    log: capturedLogger().log,
    clock,
  });
  try {
    await clock.advance(1_000);
    await silent.holding(1, '/v1/metrics');
    let stopped = false;
    const stopping = exporter.shutdown().then(() => {
      stopped = true;
    });
    await clock.advance(4_999);
    assert.equal(stopped, false, 'waiting on the collector');
    await clock.advance(1);
    await stopping;
  } finally {
    silent.release();
    await silent.close();
  }
});

test('a whole server pushes its registry over OTLP/HTTP every interval, with labels, histograms and the tracer\'s resource', { timeout: 60_000 }, async () => {
  const receiver = await startHttpMetricsReceiver();
  const observed = await startObservedServer([
    `--observability.otlp_endpoint=${receiver.url}`,
    '--observability.enable_tracing=false',
    '--observability.metrics_export_interval=200ms',
    '--observability.otlp_headers=x-tenant=t1',
    '--observability.service_name=svc-under-test',
    '--observability.deployment_environment=staging',
  ]);
  try {
    const deployed = await rest(observed.api, 'POST', '/api/v1/agents', { name: 'export-echo', wasm_module: example('echo').toString('base64') });
    assert.equal(deployed.status, 201);
    assert.equal((await rest(observed.api, 'GET', '/api/v1/health')).status, 200);

    const metrics = await receiver.exportWhere(
      (m) =>
        metricNamed(m, METRICS.agentsDeployed.name)?.points[0]?.value === 1 &&
        pointWith(metricNamed(m, METRICS.httpRequests.name), { method: 'GET', status: '200' }) !== undefined,
      'an export after the deploy and the health call',
    );
    assert.ok(receiver.contentTypes.every((type) => type === 'application/x-protobuf'), receiver.contentTypes.join());
    assert.ok(receiver.tenants.every((tenant) => tenant === 't1'));

    const agents = metricNamed(metrics, METRICS.agentsDeployed.name);
    assert.equal(agents?.kind, 'sum');
    assert.equal(agents?.monotonic, true);
    assert.equal(agents?.temporality, OTLP_CUMULATIVE);
    assert.equal(agents?.description, METRICS.agentsDeployed.help);
    assert.equal(pointWith(metricNamed(metrics, METRICS.httpRequests.name), { method: 'POST', status: '201' })?.value, 1);
    assert.equal(metricNamed(metrics, METRICS.agentsActive.name)?.points[0]?.value, 1, 'a gauge read at collection');

    const duration = metricNamed(metrics, METRICS.httpRequestDuration.name);
    assert.equal(duration?.kind, 'histogram');
    assert.equal(duration?.temporality, OTLP_CUMULATIVE);
    const post = pointWith(duration, { method: 'POST' });
    assert.deepEqual(post?.explicitBounds, [...REQUEST_BUCKETS]);
    assert.equal(post?.count, 1);
    assert.equal(post?.bucketCounts?.reduce((a, b) => a + b, 0), 1);
    assert.ok((post?.sum ?? 0) > 0);

    // Every catalog metric without labels always has a series, and Node's process metrics ride along.
    for (const spec of Object.values(METRICS)) if (spec.labels.length === 0) assert.ok(metricNamed(metrics, spec.name), `${spec.name} exported`);
    assert.equal(metricNamed(metrics, 'nodejs_heap_size_used_bytes')?.kind, 'gauge');
    for (const metric of metrics) {
      assert.equal(metric.scope, 'svc');
      assert.equal(metric.resource['service.name'], 'svc-under-test');
      assert.equal(metric.resource['service.version'], VERSION);
      assert.equal(metric.resource['deployment.environment.name'], 'staging');
    }
    await receiver.waitForExports(receiver.exports.length + 2);
  } finally {
    await observed.stop();
    await receiver.close();
  }
});

test('a collector that is down: calls still answer, and one warning line says so', { timeout: 60_000 }, async () => {
  const port = await closedPort();
  const observed = await startObservedServer([
    `--observability.otlp_endpoint=http://127.0.0.1:${port}`,
    '--observability.enable_tracing=false',
    '--observability.metrics_export_interval=100ms',
    '--observability.otlp_timeout=300ms',
  ]);
  let stopped = false;
  try {
    const line = await observed.log.waitFor((r) => r.msg === METRIC_EXPORT_MESSAGES.failed, 'the export failure line');
    assert.equal(line?.level, 40);
    assert.equal(line?.endpoint, `http://127.0.0.1:${port}`);
    assert.match(String(line?.reason), /ECONNREFUSED/);
    for (let i = 0; i < 20; i++) assert.equal((await rest(observed.api, 'GET', '/api/v1/health')).status, 200);
    await observed.stop();
    stopped = true;
    const warnings = observed.log.records().filter((r) => Number(r.level) >= 40);
    assert.deepEqual(warnings.map((r) => r.msg), [METRIC_EXPORT_MESSAGES.failed], 'one line for every failed export');
  } finally {
    if (!stopped) await observed.stop();
  }
});

test('a silent collector for traces and metrics: stop() waits otlp_timeout once, not once for each', { timeout: 60_000 }, async () => {
  const silent = await startSilentCollector();
  const clock = createSimulatedClock();
  const observed = await startObservedServer([`--observability.otlp_endpoint=${silent.url}`, '--observability.otlp_timeout=5s'], { clock });
  let stopped = false;
  try {
    // Spans ended: the trace side holds a request the collector never answers, at the latest at the stop.
    for (let i = 0; i < 20; i++) assert.equal((await rest(observed.api, 'GET', '/api/v1/health')).status, 200);
    const stopping = observed.stop().then(() => {
      stopped = true;
    });
    // The last metric export leaves once both sides wait on the collector, each for otlp_timeout.
    await silent.holding(1, '/v1/metrics');
    await clock.advance(4_999);
    assert.equal(stopped, false, 'waiting on the collector');
    // One after the other, the two would take twice otlp_timeout.
    await clock.advance(1);
    await stopping;
    assert.ok(observed.log.records().some((r) => r.msg === 'stopped'));
  } finally {
    silent.release();
    if (!stopped) await observed.stop();
    await silent.close();
  }
});

test('enable_metrics = false: a whole server with an endpoint pushes no metric, not even at stop', { timeout: 60_000 }, async () => {
  const receiver = await startHttpMetricsReceiver();
  const observed = await startObservedServer([`--observability.otlp_endpoint=${receiver.url}`, '--observability.enable_metrics=false', '--observability.metrics_export_interval=100ms']);
  try {
    assert.equal((await rest(observed.api, 'GET', '/api/v1/health')).status, 200);
  } finally {
    // A server that exported would have made its last export by the end of its stop.
    await observed.stop();
    await receiver.close();
  }
  assert.equal(receiver.exports.length, 0);
});
