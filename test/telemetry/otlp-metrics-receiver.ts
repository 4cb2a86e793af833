/**
 * Test collectors for OTLP metric exports: OTLP/HTTP (POST /v1/metrics) and
 * OTLP/gRPC (MetricsService/Export) on 127.0.0.1, decoded with the OTLP
 * definitions themselves (otlp-decoder.ts) and flattened, one entry per
 * export request.
 */
import { attributesOf, decodeMetricsRequest, type OtlpMetricsRequest, type OtlpNumberPoint } from './otlp-decoder.js';
import { startOtlpGrpcServer, startOtlpHttpServer } from './otlp-receiver.js';
import { whenArrived } from './when-arrived.js';

/** `aggregation_temporality` CUMULATIVE in OTLP. */
export const OTLP_CUMULATIVE = 2;

export interface ReceivedPoint {
  attributes: Record<string, unknown>;
  /** Sum and gauge points. */
  value?: number;
  /** Histogram points. */
  count?: number;
  sum?: number;
  bucketCounts?: number[];
  explicitBounds?: number[];
}

export interface ReceivedMetric {
  name: string;
  description: string;
  unit: string;
  kind: 'sum' | 'gauge' | 'histogram' | 'other';
  temporality?: number;
  monotonic?: boolean;
  points: ReceivedPoint[];
  resource: Record<string, unknown>;
  scope: string;
}

export interface MetricsReceiver {
  /** The endpoint to configure: http://127.0.0.1:port or grpc://127.0.0.1:port. */
  readonly url: string;
  /** One entry per export request. */
  readonly exports: ReceivedMetric[][];
  readonly contentTypes: string[];
  /** `x-tenant` of each request (HTTP header or gRPC metadata). */
  readonly tenants: string[];
  /** Resolves with the first export (oldest first) for which `done` holds, checked at each arrival; rejects after `timeoutMs`. */
  exportWhere(done: (metrics: readonly ReceivedMetric[]) => boolean, what: string, timeoutMs?: number): Promise<ReceivedMetric[]>;
  /** Resolves once `count` exports arrived in all. */
  waitForExports(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

function numberPoint(point: OtlpNumberPoint): ReceivedPoint {
  return { attributes: attributesOf(point.attributes), value: point.asDouble ?? (point.asInt === undefined ? undefined : Number(point.asInt)) };
}

function flatten(request: OtlpMetricsRequest): ReceivedMetric[] {
  const out: ReceivedMetric[] = [];
  for (const rm of request.resourceMetrics ?? []) {
    const resource = attributesOf(rm.resource?.attributes);
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
            attributes: attributesOf(p.attributes),
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
  const arrivals = new Set<() => void>();
  const receiver: MetricsReceiver = {
    url,
    exports,
    contentTypes,
    tenants,
    exportWhere: (done, what, timeoutMs = 10_000) => whenArrived(arrivals, () => exports.find(done), what, timeoutMs),
    waitForExports: (count, timeoutMs = 10_000) => whenArrived(arrivals, () => (exports.length >= count ? true : undefined), `${count} exports`, timeoutMs).then(() => undefined),
    close,
  };
  const accept = (contentType: string, tenant: string, request: OtlpMetricsRequest) => {
    contentTypes.push(contentType);
    tenants.push(tenant);
    exports.push(flatten(request));
    for (const arrival of [...arrivals]) arrival();
  };
  return { receiver, accept };
}

/** POST /v1/metrics decoded; /v1/traces acknowledged and ignored. */
export async function startHttpMetricsReceiver(): Promise<MetricsReceiver> {
  let accept: (contentType: string, tenant: string, request: OtlpMetricsRequest) => void = () => undefined;
  const server = await startOtlpHttpServer(['/v1/metrics', '/v1/traces'], ({ path, contentType, headers, body }) => {
    if (path === '/v1/metrics') accept(contentType, String(headers['x-tenant'] ?? ''), decodeMetricsRequest(body, contentType));
  });
  const made = collector(server.url, server.close);
  accept = made.accept;
  return made.receiver;
}

export async function startGrpcMetricsReceiver(): Promise<MetricsReceiver> {
  let accept: (contentType: string, tenant: string, request: OtlpMetricsRequest) => void = () => undefined;
  const server = await startOtlpGrpcServer('/opentelemetry.proto.collector.metrics.v1.MetricsService/Export', (call) =>
    accept('application/grpc', String(call.metadata.get('x-tenant')[0] ?? ''), decodeMetricsRequest(call.request)),
  );
  const made = collector(server.url, server.close);
  accept = made.accept;
  return made.receiver;
}

export function metricNamed(metrics: readonly ReceivedMetric[], name: string): ReceivedMetric | undefined {
  return metrics.find((m) => m.name === name);
}

export function pointWith(metric: ReceivedMetric | undefined, attrs: Record<string, string>): ReceivedPoint | undefined {
  return metric?.points.find((p) => Object.entries(attrs).every(([k, v]) => p.attributes[k] === v));
}
