/**
 * The prom-client registry as OpenTelemetry metric data
 * (prometheus-to-otlp.ts): each Prometheus type converted, its unit from the
 * name's suffix, and what has no OTLP form left out.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ValueType } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { AggregationTemporality, DataPointType } from '@opentelemetry/sdk-metrics';
import { Counter, Gauge, Histogram, Registry, Summary } from 'prom-client';
import { toMetricData, toResourceMetrics, unitOf, type ConversionOptions, type PromMetricJson } from '../../src/telemetry/prometheus-to-otlp.js';

async function promJson(registry: Registry): Promise<PromMetricJson[]> {
  return (await registry.getMetricsAsJSON()) as unknown as PromMetricJson[];
}

const CONVERSION: ConversionOptions = {
  resource: resourceFromAttributes({ 'service.name': 'unit' }),
  scope: { name: 'svc', version: '1.0.0' },
  startTime: [1_700_000_000, 0],
  time: [1_700_000_060, 500],
};

test('a counter becomes a cumulative monotonic sum, one point per label set, label values as string attributes', async () => {
  const registry = new Registry();
  const counter = new Counter({ name: 'c_requests_total', help: 'Requests.', labelNames: ['method', 'status'], registers: [registry] });
  counter.inc({ method: 'GET', status: 200 }, 3);
  counter.inc({ method: 'POST', status: 201 });
  const [json] = await promJson(registry);
  const data = toMetricData(json!, CONVERSION);
  assert.ok(data !== undefined && data.dataPointType === DataPointType.SUM);
  assert.equal(data.isMonotonic, true);
  assert.equal(data.aggregationTemporality, AggregationTemporality.CUMULATIVE);
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
  assert.ok(idle !== undefined && idle.dataPointType === DataPointType.GAUGE);
  assert.deepEqual(idle.dataPoints.map((p) => [p.attributes, p.value]), [[{}, 0]]);
  const set = toMetricData(memory!, CONVERSION);
  assert.ok(set !== undefined && set.dataPointType === DataPointType.GAUGE);
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
  assert.ok(data !== undefined && data.dataPointType === DataPointType.HISTOGRAM);
  assert.equal(data.aggregationTemporality, AggregationTemporality.CUMULATIVE);
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
  assert.ok(empty !== undefined && empty.dataPointType === DataPointType.HISTOGRAM);
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
