/**
 * The prom-client registry's values as OpenTelemetry metric data, for the
 * OTLP metric export (metrics-export.ts). The registry stays the one source
 * of truth: each export reads `registry.getMetricsAsJSON()` and converts it.
 *
 *   counter    → Sum, cumulative, monotonic
 *   gauge      → Gauge
 *   histogram  → Histogram, cumulative; the explicit bounds are the finite
 *                `le` values and prom-client's cumulative bucket counts become
 *                per-bucket counts (the last one is the `+Inf` bucket)
 *   summary    → left out: OpenTelemetry's SDK has no summary point, and svc
 *                registers none
 *
 * Names stay the Prometheus names (`svc_agents_total`), so dashboards built on
 * either path read the same series. Labels become data point attributes, with
 * string values as Prometheus has them.
 */
import { ValueType, type Attributes, type HrTime } from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import * as sdk from '@opentelemetry/sdk-metrics';

/**
 * One entry of `registry.getMetricsAsJSON()` as prom-client returns it at run
 * time (its typings declare `type` a numeric enum; it is the text `counter`,
 * `gauge`, `histogram` or `summary`).
 */
export interface PromMetricJson {
  readonly name: string;
  readonly help: string;
  readonly type: string;
  readonly values: readonly PromValueJson[];
}

export interface PromValueJson {
  readonly value: number;
  readonly labels: Readonly<Record<string, string | number | undefined>>;
  /** Histograms: `<name>_bucket`, `<name>_sum` or `<name>_count`. */
  readonly metricName?: string;
}

export interface ConversionOptions {
  readonly resource: Resource;
  readonly scope: { readonly name: string; readonly version?: string };
  /** Start of the cumulative series: when the export began. */
  readonly startTime: HrTime;
  /** When the values were read. */
  readonly time: HrTime;
}

/** Prometheus base-unit suffixes and their UCUM units (OpenTelemetry's `unit`); `_total` is dropped first. */
const UNIT_SUFFIXES: ReadonlyArray<readonly [string, string]> = [
  ['_seconds', 's'],
  ['_bytes', 'By'],
  ['_ratio', '1'],
];

/** The histogram bucket label. */
const LE = 'le';

export function unitOf(name: string): string {
  const base = name.endsWith('_total') ? name.slice(0, -'_total'.length) : name;
  return UNIT_SUFFIXES.find(([suffix]) => base.endsWith(suffix))?.[1] ?? '';
}

function attributesOf(labels: PromValueJson['labels'], skip?: string): Attributes {
  const attributes: Attributes = {};
  for (const [name, value] of Object.entries(labels)) if (value !== undefined && name !== skip) attributes[name] = String(value);
  return attributes;
}

/** A stable key of a label set, to group a histogram's samples by series. */
function seriesKey(attributes: Attributes): string {
  return JSON.stringify(Object.entries(attributes).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

interface HistogramSeries {
  attributes: Attributes;
  /** Finite `le` → cumulative count; the `+Inf` bucket is `count`. */
  buckets: Map<number, number>;
  sum: number;
  count: number;
}

function histogramPoints(metric: PromMetricJson, options: ConversionOptions): sdk.DataPoint<sdk.Histogram>[] {
  const series = new Map<string, HistogramSeries>();
  for (const sample of metric.values) {
    const attributes = attributesOf(sample.labels, LE);
    const key = seriesKey(attributes);
    let entry = series.get(key);
    if (entry === undefined) {
      entry = { attributes, buckets: new Map(), sum: 0, count: 0 };
      series.set(key, entry);
    }
    switch (sample.metricName) {
      case `${metric.name}_bucket`: {
        const le = Number(sample.labels[LE]);
        if (Number.isFinite(le)) entry.buckets.set(le, sample.value);
        break;
      }
      case `${metric.name}_sum`:
        entry.sum = sample.value;
        break;
      case `${metric.name}_count`:
        entry.count = sample.value;
        break;
    }
  }
  return [...series.values()].map(({ attributes, buckets, sum, count }) => {
    const sorted = [...buckets].sort(([a], [b]) => a - b);
    const counts: number[] = [];
    let below = 0;
    for (const [, cumulative] of sorted) {
      counts.push(cumulative - below);
      below = cumulative;
    }
    counts.push(count - below);
    return {
      startTime: options.startTime,
      endTime: options.time,
      attributes,
      value: { buckets: { boundaries: sorted.map(([bound]) => bound), counts }, sum, count },
    };
  });
}

function numberPoints(metric: PromMetricJson, options: ConversionOptions): sdk.DataPoint<number>[] {
  return metric.values.map((sample) => ({ startTime: options.startTime, endTime: options.time, attributes: attributesOf(sample.labels), value: sample.value }));
}

/** One metric as OpenTelemetry data; undefined for a summary or a metric without series yet. */
export function toMetricData(metric: PromMetricJson, options: ConversionOptions): sdk.MetricData | undefined {
  if (metric.values.length === 0) return undefined;
  // prom-client keeps every value as a double, whether it only ever counts whole things or not.
  const descriptor = { name: metric.name, description: metric.help, unit: unitOf(metric.name), valueType: ValueType.DOUBLE };
  const cumulative = sdk.AggregationTemporality.CUMULATIVE;
  switch (metric.type) {
    case 'counter':
      return { descriptor, aggregationTemporality: cumulative, dataPointType: sdk.DataPointType.SUM, isMonotonic: true, dataPoints: numberPoints(metric, options) };
    case 'gauge':
      return { descriptor, aggregationTemporality: cumulative, dataPointType: sdk.DataPointType.GAUGE, dataPoints: numberPoints(metric, options) };
    case 'histogram':
      return { descriptor, aggregationTemporality: cumulative, dataPointType: sdk.DataPointType.HISTOGRAM, dataPoints: histogramPoints(metric, options) };
    default:
      return undefined;
  }
}

/** Every convertible metric of the registry, in one scope under `resource`. */
export function toResourceMetrics(metrics: readonly PromMetricJson[], options: ConversionOptions): sdk.ResourceMetrics {
  const data: sdk.MetricData[] = [];
  for (const metric of metrics) {
    const converted = toMetricData(metric, options);
    if (converted !== undefined) data.push(converted);
  }
  return { resource: options.resource, scopeMetrics: [{ scope: { ...options.scope }, metrics: data }] };
}
