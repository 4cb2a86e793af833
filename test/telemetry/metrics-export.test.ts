/**
 * OTLP metric export (src/telemetry/metrics-export.ts and
 * prometheus-to-otlp.ts): each prom-client type converted; the registry
 * pushed to real collectors on 127.0.0.1 over OTLP/HTTP (JSON) and OTLP/gRPC
 * (protobuf), from a whole server too; a collector that is down or silent
 * costs one log line and never holds up a call or the server's stop; and no
 * export without `enable_metrics` or an endpoint.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import * as grpc from '@grpc/grpc-js';
import { ValueType } from '@opentelemetry/api';
import { metrics as sdk, resources } from '@opentelemetry/sdk-node';
import { Counter, Gauge, Histogram, Registry, Summary } from 'prom-client';
import protobuf from 'protobufjs';
import { ConfigError } from '../../src/config/load.js';
import { REQUEST_BUCKETS, METRICS } from '../../src/telemetry/metric-catalog.js';
import { createMetricsExport, METRIC_EXPORT_MESSAGES, metricsEndpoint, type MetricsExportConfig } from '../../src/telemetry/metrics-export.js';
import { createMetrics } from '../../src/telemetry/metrics.js';
import { toMetricData, toResourceMetrics, unitOf, type ConversionOptions, type PromMetricJson } from '../../src/telemetry/prometheus-to-otlp.js';
import { VERSION } from '../../src/version.js';
import { eventually, example, rest, startObservedServer } from '../observability/observability-fixtures.js';
import { closedPort, field, OTLP_COMMON_TYPES, rawExportService, startOtlpHttpServer, startSilentCollector } from './otlp-receiver.js';
import { capturedLogger } from './telemetry-fixtures.js';

// --- Test collectors -------------------------------------------------------

interface ReceivedPoint {
  attributes: Record<string, unknown>;
  /** Sum and gauge points. */
  value?: number;
  /** Histogram points. */
  count?: number;
  sum?: number;
  bucketCounts?: number[];
  explicitBounds?: number[];
}

interface ReceivedMetric {
  name: string;
  description: string;
  unit: string;
  kind: 'sum' | 'gauge' | 'histogram' | 'other';
  /** 2 is CUMULATIVE in OTLP. */
  temporality?: number;
  monotonic?: boolean;
  points: ReceivedPoint[];
  resource: Record<string, unknown>;
  scope: string;
}

interface MetricsReceiver {
  /** The endpoint to configure: http://127.0.0.1:port or grpc://127.0.0.1:port. */
  readonly url: string;
  /** One entry per export request. */
  readonly exports: ReceivedMetric[][];
  readonly contentTypes: string[];
  /** `x-tenant` of each request (HTTP header or gRPC metadata). */
  readonly tenants: string[];
  /** Resolves with the first export (oldest first) for which `done` holds; rejects after `timeoutMs`. */
  exportWhere(done: (metrics: readonly ReceivedMetric[]) => boolean, what: string, timeoutMs?: number): Promise<ReceivedMetric[]>;
  close(): Promise<void>;
}

const OTLP_CUMULATIVE = 2;

interface OtlpKeyValue {
  key: string;
  value?: { stringValue?: string; boolValue?: boolean; intValue?: string | number; doubleValue?: number };
}
interface OtlpNumberPoint {
  attributes?: OtlpKeyValue[];
  asDouble?: number;
  asInt?: string | number;
}
interface OtlpHistogramPoint {
  attributes?: OtlpKeyValue[];
  count?: string | number;
  sum?: number;
  bucketCounts?: (string | number)[];
  explicitBounds?: number[];
}
interface OtlpMetric {
  name: string;
  description?: string;
  unit?: string;
  sum?: { aggregationTemporality?: number; isMonotonic?: boolean; dataPoints?: OtlpNumberPoint[] };
  gauge?: { dataPoints?: OtlpNumberPoint[] };
  histogram?: { aggregationTemporality?: number; dataPoints?: OtlpHistogramPoint[] };
}
/** ExportMetricsServiceRequest in the OTLP/JSON shape, whichever encoding it came in. */
interface OtlpMetricsRequest {
  resourceMetrics?: {
    resource?: { attributes?: OtlpKeyValue[] };
    scopeMetrics?: { scope?: { name?: string }; metrics?: OtlpMetric[] }[];
  }[];
}

/** Our own subset of opentelemetry-proto (metrics/v1, collector/metrics/v1): the fields read here, with their numbers. */
const OTLP_METRICS_DECLARATION = {
  nested: {
    ...OTLP_COMMON_TYPES,
    ExportMetricsServiceRequest: { fields: { resourceMetrics: field('ResourceMetrics', 1, 'repeated') } },
    ResourceMetrics: { fields: { resource: field('Resource', 1), scopeMetrics: field('ScopeMetrics', 2, 'repeated') } },
    ScopeMetrics: { fields: { scope: field('InstrumentationScope', 1), metrics: field('Metric', 2, 'repeated') } },
    Metric: {
      fields: {
        name: field('string', 1),
        description: field('string', 2),
        unit: field('string', 3),
        gauge: field('Gauge', 5),
        sum: field('Sum', 7),
        histogram: field('Histogram', 9),
      },
    },
    Gauge: { fields: { dataPoints: field('NumberDataPoint', 1, 'repeated') } },
    Sum: { fields: { dataPoints: field('NumberDataPoint', 1, 'repeated'), aggregationTemporality: field('int32', 2), isMonotonic: field('bool', 3) } },
    Histogram: { fields: { dataPoints: field('HistogramDataPoint', 1, 'repeated'), aggregationTemporality: field('int32', 2) } },
    NumberDataPoint: { fields: { asDouble: field('double', 4), asInt: field('sfixed64', 6), attributes: field('KeyValue', 7, 'repeated') } },
    HistogramDataPoint: {
      fields: {
        count: field('fixed64', 4),
        sum: field('double', 5),
        bucketCounts: field('fixed64', 6, 'repeated'),
        explicitBounds: field('double', 7, 'repeated'),
        attributes: field('KeyValue', 9, 'repeated'),
      },
    },
  },
};

const ExportRequest = protobuf.Root.fromJSON(OTLP_METRICS_DECLARATION).lookupType('ExportMetricsServiceRequest');

function decodeProtobuf(body: Uint8Array): OtlpMetricsRequest {
  return ExportRequest.toObject(ExportRequest.decode(body), { longs: String, defaults: false, oneofs: false }) as OtlpMetricsRequest;
}

function attributes(list: OtlpKeyValue[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { key, value } of list ?? []) {
    if (value === undefined) continue;
    out[key] = value.stringValue ?? value.boolValue ?? (value.intValue !== undefined ? Number(value.intValue) : value.doubleValue);
  }
  return out;
}

function numberPoint(point: OtlpNumberPoint): ReceivedPoint {
  return { attributes: attributes(point.attributes), value: point.asDouble ?? (point.asInt === undefined ? undefined : Number(point.asInt)) };
}

function flatten(request: OtlpMetricsRequest): ReceivedMetric[] {
  const out: ReceivedMetric[] = [];
  for (const rm of request.resourceMetrics ?? []) {
    const resource = attributes(rm.resource?.attributes);
    for (const sm of rm.scopeMetrics ?? []) {
      for (const metric of sm.metrics ?? []) {
        const common = { name: metric.name, description: metric.description ?? '', unit: metric.unit ?? '', resource, scope: sm.scope?.name ?? '' };
        if (metric.sum !== undefined) {
          const { aggregationTemporality, isMonotonic, dataPoints } = metric.sum;
          out.push({ ...common, kind: 'sum', temporality: aggregationTemporality, monotonic: isMonotonic ?? false, points: (dataPoints ?? []).map(numberPoint) });
        } else if (metric.gauge !== undefined) {
          out.push({ ...common, kind: 'gauge', points: (metric.gauge.dataPoints ?? []).map(numberPoint) });
        } else if (metric.histogram !== undefined) {
          const points = (metric.histogram.dataPoints ?? []).map((p) => ({
            attributes: attributes(p.attributes),
            count: Number(p.count ?? 0),
            sum: p.sum,
            bucketCounts: (p.bucketCounts ?? []).map(Number),
            explicitBounds: p.explicitBounds ?? [],
          }));
          out.push({ ...common, kind: 'histogram', temporality: metric.histogram.aggregationTemporality, points });
        } else {
          out.push({ ...common, kind: 'other', points: [] });
        }
      }
    }
  }
  return out;
}

function collector(url: string, close: () => Promise<void>) {
  const exports: ReceivedMetric[][] = [];
  const contentTypes: string[] = [];
  const tenants: string[] = [];
  const receiver: MetricsReceiver = {
    url,
    exports,
    contentTypes,
    tenants,
    async exportWhere(done, what, timeoutMs = 10_000) {
      const found = await eventually(() => exports.find(done), what, timeoutMs);
      return found;
    },
    close,
  };
  const accept = (contentType: string, tenant: string, request: OtlpMetricsRequest) => {
    contentTypes.push(contentType);
    tenants.push(tenant);
    exports.push(flatten(request));
  };
  return { receiver, accept };
}

/** POST /v1/metrics decoded (JSON or protobuf); /v1/traces acknowledged and ignored. */
async function startHttpMetricsReceiver(): Promise<MetricsReceiver> {
  let accept: (contentType: string, tenant: string, request: OtlpMetricsRequest) => void = () => undefined;
  const server = await startOtlpHttpServer(['/v1/metrics', '/v1/traces'], ({ path, contentType, headers, body }) => {
    if (path !== '/v1/metrics') return;
    const request = contentType.startsWith('application/json') ? (JSON.parse(body.toString('utf8')) as OtlpMetricsRequest) : decodeProtobuf(body);
    accept(contentType, String(headers['x-tenant'] ?? ''), request);
  });
  const made = collector(server.url, server.close);
  accept = made.accept;
  return made.receiver;
}

const METRICS_SERVICE = rawExportService('/opentelemetry.proto.collector.metrics.v1.MetricsService/Export');

async function startGrpcMetricsReceiver(): Promise<MetricsReceiver> {
  const server = new grpc.Server();
  let accept: (contentType: string, tenant: string, request: OtlpMetricsRequest) => void = () => undefined;
  server.addService(METRICS_SERVICE, {
    Export: (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
      accept('application/grpc', String(call.metadata.get('x-tenant')[0] ?? ''), decodeProtobuf(call.request));
      callback(null, Buffer.alloc(0));
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, bound) => (err ? reject(err) : resolve(bound))),
  );
  const made = collector(`grpc://127.0.0.1:${port}`, () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())));
  accept = made.accept;
  return made.receiver;
}

// --- Helpers ---------------------------------------------------------------

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

function metricNamed(metrics: readonly ReceivedMetric[], name: string): ReceivedMetric | undefined {
  return metrics.find((m) => m.name === name);
}

function pointWith(metric: ReceivedMetric | undefined, attrs: Record<string, string>): ReceivedPoint | undefined {
  return metric?.points.find((p) => Object.entries(attrs).every(([k, v]) => p.attributes[k] === v));
}

async function promJson(registry: Registry): Promise<PromMetricJson[]> {
  return (await registry.getMetricsAsJSON()) as unknown as PromMetricJson[];
}

const CONVERSION: ConversionOptions = {
  resource: resources.resourceFromAttributes({ 'service.name': 'unit' }),
  scope: { name: 'svc', version: '1.0.0' },
  startTime: [1_700_000_000, 0],
  time: [1_700_000_060, 500],
};

// --- Conversion ------------------------------------------------------------

test('a counter becomes a cumulative monotonic sum, one point per label set, label values as string attributes', async () => {
  const registry = new Registry();
  const counter = new Counter({ name: 'c_requests_total', help: 'Requests.', labelNames: ['method', 'status'], registers: [registry] });
  counter.inc({ method: 'GET', status: 200 }, 3);
  counter.inc({ method: 'POST', status: 201 });
  const [json] = await promJson(registry);
  const data = toMetricData(json!, CONVERSION);
  assert.ok(data !== undefined && data.dataPointType === sdk.DataPointType.SUM);
  assert.equal(data.isMonotonic, true);
  assert.equal(data.aggregationTemporality, sdk.AggregationTemporality.CUMULATIVE);
  assert.deepEqual(data.descriptor, { name: 'c_requests_total', description: 'Requests.', unit: '', valueType: ValueType.DOUBLE });
  assert.deepEqual(
    data.dataPoints.map((p) => [p.attributes, p.value]),
    [
      [{ method: 'GET', status: '200' }, 3],
      [{ method: 'POST', status: '201' }, 1],
    ],
  );
  for (const point of data.dataPoints) {
    assert.deepEqual(point.startTime, CONVERSION.startTime);
    assert.deepEqual(point.endTime, CONVERSION.time);
  }
});

test('a gauge becomes a gauge; one without labels reports 0 before it is set', async () => {
  const registry = new Registry();
  new Gauge({ name: 'g_queue_size', help: 'Queue.', registers: [registry] });
  new Gauge({ name: 'g_memory_bytes', help: 'Memory.', labelNames: ['agent_id'], registers: [registry] }).set({ agent_id: 'a1' }, 65_536);
  const [queue, memory] = await promJson(registry);
  const idle = toMetricData(queue!, CONVERSION);
  assert.ok(idle !== undefined && idle.dataPointType === sdk.DataPointType.GAUGE);
  assert.deepEqual(idle.dataPoints.map((p) => [p.attributes, p.value]), [[{}, 0]]);
  const set = toMetricData(memory!, CONVERSION);
  assert.ok(set !== undefined && set.dataPointType === sdk.DataPointType.GAUGE);
  assert.equal(set.descriptor.unit, 'By');
  assert.deepEqual(set.dataPoints.map((p) => [p.attributes, p.value]), [[{ agent_id: 'a1' }, 65_536]]);
});

test('a histogram becomes a cumulative histogram: finite le as explicit bounds, per-bucket counts, sum and count per label set', async () => {
  const registry = new Registry();
  const histogram = new Histogram({ name: 'h_duration_seconds', help: 'Duration.', labelNames: ['method'], buckets: [0.1, 1], registers: [registry] });
  for (const seconds of [0.05, 0.5, 5, 0.1]) histogram.observe({ method: 'GET' }, seconds);
  histogram.observe({ method: 'POST' }, 2);
  new Histogram({ name: 'h_idle_seconds', help: 'Never observed.', buckets: [0.5], registers: [registry] });
  const [busy, idle] = await promJson(registry);

  const data = toMetricData(busy!, CONVERSION);
  assert.ok(data !== undefined && data.dataPointType === sdk.DataPointType.HISTOGRAM);
  assert.equal(data.aggregationTemporality, sdk.AggregationTemporality.CUMULATIVE);
  assert.equal(data.descriptor.unit, 's');
  const [get, post] = data.dataPoints;
  assert.deepEqual(get?.attributes, { method: 'GET' }, 'le is not an attribute');
  // 0.05 and 0.1 are ≤ 0.1 (upper bounds are inclusive in both models), 0.5 ≤ 1, 5 overflows.
  assert.deepEqual(get?.value.buckets, { boundaries: [0.1, 1], counts: [2, 1, 1] });
  assert.equal(get?.value.count, 4);
  assert.ok(Math.abs((get?.value.sum ?? 0) - 5.65) < 1e-9);
  assert.deepEqual(post?.attributes, { method: 'POST' });
  assert.deepEqual(post?.value.buckets, { boundaries: [0.1, 1], counts: [0, 0, 1] });
  assert.equal(post?.value.count, 1);

  const empty = toMetricData(idle!, CONVERSION);
  assert.ok(empty !== undefined && empty.dataPointType === sdk.DataPointType.HISTOGRAM);
  assert.deepEqual(empty.dataPoints.map((p) => p.value), [{ buckets: { boundaries: [0.5], counts: [0, 0] }, sum: 0, count: 0 }]);
});

test('summaries and metrics without series yet are left out; the rest share one scope under the resource', async () => {
  const registry = new Registry();
  new Summary({ name: 's_latency_seconds', help: 'Summary.', registers: [registry] }).observe(1);
  new Counter({ name: 'c_unused_total', help: 'No series yet.', labelNames: ['status'], registers: [registry] });
  new Counter({ name: 'c_plain_total', help: 'Plain.', registers: [registry] });
  const json = await promJson(registry);
  assert.equal(toMetricData(json[0]!, CONVERSION), undefined, 'summary');
  assert.equal(toMetricData(json[1]!, CONVERSION), undefined, 'labelled, no series');
  const out = toResourceMetrics(json, CONVERSION);
  assert.equal(out.resource, CONVERSION.resource);
  assert.equal(out.scopeMetrics.length, 1);
  assert.deepEqual(out.scopeMetrics[0]?.scope, CONVERSION.scope);
  assert.deepEqual(out.scopeMetrics[0]?.metrics.map((m) => m.descriptor.name), ['c_plain_total']);
});

test('units come from the Prometheus base-unit suffix', () => {
  assert.equal(unitOf('svc_http_request_duration_seconds'), 's');
  assert.equal(unitOf('process_cpu_seconds_total'), 's');
  assert.equal(unitOf('svc_network_bytes_total'), 'By');
  assert.equal(unitOf('svc_runtime_cpu_usage_ratio'), '1');
  assert.equal(unitOf('svc_agents_total'), '');
  assert.equal(unitOf('svc_message_queue_size'), '');
});

test('the metrics endpoint: /v1/metrics beside /v1/traces over HTTP, the same address over gRPC', () => {
  assert.deepEqual(metricsEndpoint({ protocol: 'http', url: 'http://collector:4318/v1/traces' }), { protocol: 'http', url: 'http://collector:4318/v1/metrics' });
  assert.deepEqual(metricsEndpoint({ protocol: 'http', url: 'https://otlp.example.com/otlp/v1/traces?key=k' }), {
    protocol: 'http',
    url: 'https://otlp.example.com/otlp/v1/metrics?key=k',
  });
  assert.deepEqual(metricsEndpoint({ protocol: 'grpc', url: 'https://collector:4317' }), { protocol: 'grpc', url: 'https://collector:4317' });
});

// --- Export ----------------------------------------------------------------

test('no export without enable_metrics or without an endpoint; an interval of 0 with both is refused', async () => {
  const receiver = await startHttpMetricsReceiver();
  try {
    const registry = createMetrics({ nodeMetrics: false }).registry;
    const off = createMetricsExport(exportConfig({ enable_metrics: false, otlp_endpoint: receiver.url, metrics_export_interval: 20 }), { registry, serviceVersion: '1' });
    const nowhere = createMetricsExport(exportConfig({ otlp_endpoint: '', metrics_export_interval: 20 }), { registry, serviceVersion: '1' });
    assert.equal(off.exporting, false);
    assert.equal(nowhere.exporting, false);
    await off.exportNow();
    await sleep(100);
    await Promise.all([off.shutdown(), nowhere.shutdown()]);
    assert.equal(receiver.exports.length, 0);
    assert.throws(
      () => createMetricsExport(exportConfig({ otlp_endpoint: receiver.url, metrics_export_interval: 0 }), { registry, serviceVersion: '1' }),
      (error: unknown) => error instanceof ConfigError && error.key === 'observability.metrics_export_interval',
    );
  } finally {
    await receiver.close();
  }
});

test('OTLP/gRPC: the svc_* registry arrives as protobuf with metadata, and shutdown sends one last export', { timeout: 30_000 }, async () => {
  const receiver = await startGrpcMetricsReceiver();
  const metrics = createMetrics({ nodeMetrics: false });
  const exporter = createMetricsExport(
    exportConfig({ otlp_endpoint: receiver.url, otlp_headers: { 'X-Tenant': 't1' }, service_name: 'svc-grpc', service_version: '2.0.0-rc.1', deployment_environment: 'staging' }),
    { registry: metrics.registry, serviceVersion: '1.2.3' },
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

    metrics.agentsDeployed.inc();
    await exporter.shutdown();
    assert.equal(receiver.exports.length, 2, 'one last export at shutdown');
    assert.equal(metricNamed(receiver.exports[1]!, METRICS.agentsDeployed.name)?.points[0]?.value, 2, 'cumulative');
    await exporter.exportNow();
    assert.equal(receiver.exports.length, 2, 'nothing after shutdown');
  } finally {
    await exporter.shutdown();
    await receiver.close();
  }
});

test('a silent collector: shutdown returns within otlp_timeout', { timeout: 30_000 }, async () => {
  const silent = await startSilentCollector();
  const { log } = capturedLogger();
  const exporter = createMetricsExport(exportConfig({ otlp_endpoint: silent.url, otlp_timeout: 300, metrics_export_interval: 20 }), {
    registry: createMetrics({ nodeMetrics: false }).registry,
    serviceVersion: '1',
    log,
  });
  try {
    await sleep(100); // an export is in flight, unanswered
    const started = Date.now();
    await exporter.shutdown();
    const took = Date.now() - started;
    assert.ok(took < 1_000, `shutdown took ${took} ms`);
  } finally {
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
    assert.ok(receiver.contentTypes.every((type) => type.startsWith('application/json')));
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
    const before = receiver.exports.length;
    await eventually(() => (receiver.exports.length >= before + 2 ? true : undefined), 'two more exports, one per interval', 5_000);
  } finally {
    await observed.stop();
    await receiver.close();
  }
});

test('a collector that is down: calls stay fast, stop() is quick, and one warning line says so', { timeout: 60_000 }, async () => {
  const port = await closedPort();
  const observed = await startObservedServer([
    `--observability.otlp_endpoint=http://127.0.0.1:${port}`,
    '--observability.enable_tracing=false',
    '--observability.metrics_export_interval=100ms',
    '--observability.otlp_timeout=300ms',
  ]);
  let stopped = false;
  try {
    await eventually(() => (observed.log.records().some((r) => r.msg === METRIC_EXPORT_MESSAGES.failed) ? true : undefined), 'the export failure line');
    // About a second of calls, through some ten more failed exports.
    let slowest = 0;
    for (let i = 0; i < 20; i++) {
      const started = Date.now();
      assert.equal((await rest(observed.api, 'GET', '/api/v1/health')).status, 200);
      slowest = Math.max(slowest, Date.now() - started);
      await sleep(50);
    }
    assert.ok(slowest < 1_000, `slowest call ${slowest} ms`);

    const started = Date.now();
    await observed.stop();
    stopped = true;
    const took = Date.now() - started;
    assert.ok(took < 3_000, `stop took ${took} ms`);

    const warnings = observed.log.records().filter((r) => Number(r.level) >= 40);
    assert.equal(warnings.length, 1, JSON.stringify(warnings));
    const [line] = warnings;
    assert.equal(line?.msg, METRIC_EXPORT_MESSAGES.failed);
    assert.equal(line?.level, 40);
    assert.equal(line?.endpoint, `http://127.0.0.1:${port}`);
    assert.match(String(line?.reason), /ECONNREFUSED/);
  } finally {
    if (!stopped) await observed.stop();
  }
});

test('a silent collector for traces and metrics: stop() waits otlp_timeout once, not once for each', { timeout: 60_000 }, async () => {
  const silent = await startSilentCollector();
  const observed = await startObservedServer([
    `--observability.otlp_endpoint=${silent.url}`,
    '--observability.metrics_export_interval=100ms',
    '--observability.otlp_timeout=1500ms',
  ]);
  let stopped = false;
  try {
    // Spans ended and metric exports unanswered: both sides hold requests the collector never answers.
    for (let i = 0; i < 20; i++) assert.equal((await rest(observed.api, 'GET', '/api/v1/health')).status, 200);
    await sleep(300);
    const started = Date.now();
    await observed.stop();
    stopped = true;
    const took = Date.now() - started;
    // One after the other they took 3 s and more (metrics, then traces).
    assert.ok(took < 2_600, `stop took ${took} ms with otlp_timeout 1500 ms`);
    assert.ok(observed.log.records().some((r) => r.msg === 'stopped'));
  } finally {
    if (!stopped) await observed.stop();
    await silent.close();
  }
});

test('enable_metrics = false: a whole server with an endpoint pushes no metric', { timeout: 60_000 }, async () => {
  const receiver = await startHttpMetricsReceiver();
  const observed = await startObservedServer([
    `--observability.otlp_endpoint=${receiver.url}`,
    '--observability.enable_metrics=false',
    '--observability.metrics_export_interval=100ms',
  ]);
  try {
    assert.equal((await rest(observed.api, 'GET', '/api/v1/health')).status, 200);
    await sleep(400);
  } finally {
    await observed.stop();
    await receiver.close();
  }
  assert.equal(receiver.exports.length, 0);
});
