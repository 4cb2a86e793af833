/**
 * The `svc_*` metrics on a prom-client registry, one typed handle per entry
 * of metric-catalog.ts. The metrics listener serves this registry as
 * Prometheus text and `toSamples` gives the same figures as the JSON of the
 * `Metrics` RPC and `GET /api/v1/metrics`.
 *
 * Event counts are updated by the code that sees the event (`inc`,
 * `observe`); levels that are cheaper to read than to track (process memory,
 * descriptors, queue sizes kept elsewhere) are read when the registry is
 * collected, through `readAtCollect`.
 */
import type { Socket } from 'node:net';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { createRealClock, type Clock } from '../../supervisors/index.js';
import {
  grpcMethodLabel,
  grpcStatusLabel,
  httpMethodLabel,
  METRICS,
  type ExecutionStatus,
  type MetricKey,
  type MetricSpec,
} from './metric-catalog.js';
import { registerNodeMetrics } from './node-metrics.js';
import { createProcessProbes, type ProcessProbes } from './process-probes.js';

type Catalog = typeof METRICS;
type LabelsOf<S> = S extends { readonly labels: readonly (infer L extends string)[] } ? L : never;
type HandleOf<S> = S extends { readonly type: 'counter' }
  ? Counter<LabelsOf<S>>
  : S extends { readonly type: 'gauge' }
    ? Gauge<LabelsOf<S>>
    : Histogram<LabelsOf<S>>;

/** One prom-client metric per catalog entry, typed with its label names. */
export type MetricHandles = { readonly [K in MetricKey]: HandleOf<Catalog[K]> };

/** Gauges without labels, which may be read at collection time. */
export type CollectedGauge = { [K in MetricKey]: Catalog[K] extends { readonly type: 'gauge'; readonly labels: readonly [] } ? K : never }[MetricKey];

/** One sample as the JSON APIs return it (`svc.v1.MetricSample`). */
export interface MetricSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Every sample of the registry, as `Metrics` and `GET /api/v1/metrics` answer (`svc.v1.MetricsResponse`). */
export interface MetricsSummary {
  samples: MetricSample[];
}

/** A gauge with one label read at collection time: label value → figure; undefined keeps the last values. */
export type LabelledGaugeReader = () => Readonly<Record<string, number>> | undefined;

/** Returns undefined when the figure cannot be read now; the gauge then keeps its last value. */
export type GaugeReader = () => number | undefined | Promise<number | undefined>;

export interface Metrics extends MetricHandles {
  readonly registry: Registry;
  /** Sets `key` from `read` each time the registry is collected (a scrape, the Metrics RPC). Replaces an earlier reader. */
  readAtCollect(key: CollectedGauge, read: GaugeReader): void;
  /** Sets `svc_agents{state}` from `read` each time the registry is collected. */
  readStatesAtCollect(read: LabelledGaugeReader): void;
  /** A connection to the HTTP listener: counted in `svc_http_active_connections` while open and in `svc_network_bytes_total`. */
  trackConnection(socket: Socket): void;
  recordHttpRequest(method: string, status: number, seconds: number): void;
  /** `path` is the call's method path (`/svc.v1.ManagementService/Health`); `code` its gRPC status. */
  recordGrpcCall(path: string, code: number, seconds: number): void;
  recordExecution(status: ExecutionStatus, seconds: number): void;
  /** Removes every series labelled with this agent, so undeployed agents leave no series behind. */
  forgetAgent(agentId: string): void;
  /** Every sample of the registry (the `svc_*` metrics and whatever else is registered on it), as the JSON APIs return them. */
  toSamples(): Promise<MetricsSummary>;
}

export interface MetricsOptions {
  /** Registry to register on; default a new one. */
  registry?: Registry;
  /** Measured for `svc_disk_usage_bytes`; without it that gauge stays 0. */
  dataDir?: string;
  clock?: Clock;
  /** Replaces the process readings (tests). */
  probes?: ProcessProbes;
  /** Also register Node's process metrics (prom-client's defaults, `process_*` and `nodejs_*`). Default true. */
  nodeMetrics?: boolean;
}

type AnyHandle = Counter<string> | Gauge<string> | Histogram<string>;

export function createMetrics(options: MetricsOptions = {}): Metrics {
  const registry = options.registry ?? new Registry();
  const probes = options.probes ?? createProcessProbes({ clock: options.clock ?? createRealClock(), dataDir: options.dataDir });
  const readers = new Map<string, GaugeReader>();
  let readStates: LabelledGaugeReader | undefined;
  // Bytes of each open connection already added to svc_network_bytes_total.
  const connections = new Map<Socket, number>();

  function countBytes(socket: Socket): void {
    const total = socket.bytesRead + socket.bytesWritten;
    const counted = connections.get(socket) ?? 0;
    if (total > counted) {
      handles.networkBytes.inc(total - counted);
      connections.set(socket, total);
    }
  }

  function build(spec: MetricSpec): AnyHandle {
    const common = { name: spec.name, help: spec.help, labelNames: spec.labels, registers: [registry] };
    switch (spec.type) {
      case 'counter':
        return new Counter({
          ...common,
          collect: spec.name === METRICS.networkBytes.name ? () => connections.forEach((_, socket) => countBytes(socket)) : undefined,
        });
      case 'gauge':
        return new Gauge({
          ...common,
          async collect() {
            if (spec.name === METRICS.agentStates.name) {
              for (const [state, value] of Object.entries(readStates?.() ?? {})) this.set({ state }, value);
              return;
            }
            const read = readers.get(spec.name);
            if (read === undefined) return;
            try {
              const value = await read();
              if (value !== undefined && Number.isFinite(value)) this.set(value);
            } catch {
              // A reader that fails leaves the last value: one bad figure must not fail the scrape.
            }
          },
        });
      case 'histogram':
        return new Histogram({ ...common, buckets: [...(spec.buckets ?? [])] });
    }
  }

  const built: Partial<Record<MetricKey, AnyHandle>> = {};
  const agentScoped: (Gauge<'agent_id'> | Counter<'agent_id'>)[] = [];
  for (const [key, spec] of Object.entries(METRICS) as [MetricKey, MetricSpec][]) {
    const handle = build(spec);
    built[key] = handle;
    if (spec.labels.includes('agent_id')) {
      // forgetAgent removes by the full label set, so a per-agent metric carries agent_id alone.
      if (spec.labels.length !== 1 || spec.type === 'histogram') throw new Error(`${spec.name}: a per-agent metric must be a gauge or counter labelled agent_id only`);
      agentScoped.push(handle as Gauge<'agent_id'> | Counter<'agent_id'>);
    }
  }
  const handles = built as MetricHandles;
  if (options.nodeMetrics !== false) registerNodeMetrics(registry);

  const readAtCollect = (key: CollectedGauge, read: GaugeReader): void => {
    readers.set(METRICS[key].name, read);
  };
  readAtCollect('runtimeMemory', () => probes.memoryBytes());
  readAtCollect('runtimeCpu', () => probes.cpuRatio());
  readAtCollect('fileDescriptors', () => probes.fileDescriptors());
  readAtCollect('diskUsage', () => probes.diskUsageBytes());

  return {
    ...handles,
    registry,
    readAtCollect,
    readStatesAtCollect(read) {
      readStates = read;
    },
    trackConnection(socket) {
      if (connections.has(socket)) return;
      connections.set(socket, 0);
      handles.httpActiveConnections.inc();
      socket.once('close', () => {
        countBytes(socket);
        connections.delete(socket);
        handles.httpActiveConnections.dec();
      });
    },
    recordHttpRequest(method, status, seconds) {
      const verb = httpMethodLabel(method);
      handles.httpRequests.inc({ method: verb, status: String(status) });
      handles.httpRequestDuration.observe({ method: verb }, seconds);
    },
    recordGrpcCall(path, code, seconds) {
      const method = grpcMethodLabel(path);
      handles.grpcRequests.inc({ method, status: grpcStatusLabel(code) });
      handles.grpcRequestDuration.observe({ method }, seconds);
    },
    recordExecution(status, seconds) {
      handles.agentExecutions.inc({ status });
      handles.agentExecutionDuration.observe(seconds);
    },
    forgetAgent(agentId) {
      for (const gauge of agentScoped) gauge.remove({ agent_id: agentId });
    },
    async toSamples() {
      const samples: MetricSample[] = [];
      for (const metric of await registry.getMetricsAsJSON()) {
        for (const value of metric.values) {
          const labels: Record<string, string> = {};
          for (const [name, label] of Object.entries(value.labels)) if (label !== undefined) labels[name] = String(label);
          // Histograms report `_bucket`, `_sum` and `_count` samples under their own names, as the text does.
          const name = 'metricName' in value && typeof value.metricName === 'string' ? value.metricName : metric.name;
          samples.push({ name, labels, value: value.value });
        }
      }
      return { samples };
    },
  };
}
