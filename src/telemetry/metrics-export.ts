/**
 * OTLP metric export: with `enable_metrics` and an `otlp_endpoint`, every
 * metric of the server's prom-client registry is pushed to the collector each
 * `metrics_export_interval`, converted by prometheus-to-otlp.ts, under the
 * same resource attributes as the spans and in the same encoding (protobuf,
 * otlp-exporter.ts). `/metrics` keeps serving the same registry; the push is
 * a second way out, not a second set of figures.
 *
 * Exports run from a timer on the injected clock, never on a request's path,
 * one at a time: a tick that finds the previous export still in flight is
 * skipped, which loses nothing, as every value is cumulative and the next
 * export carries it. A failing collector is logged as the span exporter's is,
 * at most once a minute (export-reporter.ts).
 */
import { ExportResultCode, millisToHrTime, type ExportResult } from '@opentelemetry/core';
import type { Registry } from 'prom-client';
import { createRealClock, type Clock, type TimerHandle } from '../../supervisors/index.js';
import { ConfigError } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { createExportReporter, METRIC_EXPORT_MESSAGES } from './export-reporter.js';
import type { Logger } from './logger.js';
import { OTLP_TRACES_PATH, parseOtlpEndpoint, type OtlpEndpoint } from './otlp-endpoint.js';
import { createOtlpMetricExporter, endpointForLog } from './otlp-exporter.js';
import { toResourceMetrics, type PromMetricJson } from './prometheus-to-otlp.js';
import { serviceResource } from './service-resource.js';
import { within } from './within.js';

/** The OTLP/HTTP path of metrics (OTLP specification, "OTLP/HTTP Request"). */
export const OTLP_METRICS_PATH = '/v1/metrics';
/** The instrumentation scope of the exported metrics, as of the spans. */
export const METER_NAME = 'svc';
export const METRICS_EXPORT_INTERVAL_KEY = 'observability.metrics_export_interval';

export type MetricsExportConfig = Pick<
  Config['observability'],
  'enable_metrics' | 'otlp_endpoint' | 'otlp_timeout' | 'otlp_headers' | 'metrics_export_interval' | 'service_name' | 'service_version' | 'deployment_environment'
>;

export interface MetricsExportOptions {
  /** What is exported: the registry `/metrics` serves. */
  registry: Registry;
  /** `service.version` when `service_version` is empty: the package version. */
  serviceVersion: string;
  /** Export failures are reported here, at most once a minute. */
  log?: Logger;
  /** Drives the export interval, paces the failure lines and bounds the last export. */
  clock?: Clock;
}

export interface MetricsExport {
  /** True when metrics are pushed to a collector. */
  readonly exporting: boolean;
  /** Exports what the registry holds now, after any export in flight. Never rejects: failures are logged. */
  exportNow(): Promise<void>;
  /** Stops the timer and makes one last export, all within `otlp_timeout`. Idempotent; never rejects. */
  shutdown(): Promise<void>;
}

/** The metrics endpoint beside the traces one: `/v1/traces` becomes `/v1/metrics`; gRPC has no path. */
export function metricsEndpoint(endpoint: OtlpEndpoint): OtlpEndpoint {
  if (endpoint.protocol === 'grpc') return endpoint;
  const url = new URL(endpoint.url);
  const base = url.pathname.endsWith(OTLP_TRACES_PATH) ? url.pathname.slice(0, -OTLP_TRACES_PATH.length) : url.pathname.replace(/\/+$/, '');
  url.pathname = base + OTLP_METRICS_PATH;
  return { protocol: 'http', url: url.toString() };
}

const IDLE: MetricsExport = { exporting: false, exportNow: () => Promise.resolve(), shutdown: () => Promise.resolve() };

export function createMetricsExport(config: MetricsExportConfig, options: MetricsExportOptions): MetricsExport {
  if (!config.enable_metrics) return IDLE;
  const traces = parseOtlpEndpoint(config.otlp_endpoint);
  if (traces === undefined) return IDLE;
  if (!(config.metrics_export_interval > 0)) throw new ConfigError(METRICS_EXPORT_INTERVAL_KEY, 'must be longer than 0 when metrics are exported');
  const clock = options.clock ?? createRealClock();
  const endpoint = metricsEndpoint(traces);
  const exporter = createOtlpMetricExporter(endpoint, { timeoutMs: config.otlp_timeout, headers: config.otlp_headers });
  const report = createExportReporter({ log: options.log, clock, endpoint: endpointForLog(endpoint), messages: METRIC_EXPORT_MESSAGES });
  const resource = serviceResource(config, options.serviceVersion);
  const scope = { name: METER_NAME, version: config.service_version || options.serviceVersion };
  const startTime = millisToHrTime(Date.now());

  async function send(): Promise<void> {
    try {
      // prom-client's typings misname `type` (see PromMetricJson).
      const read = (await options.registry.getMetricsAsJSON()) as unknown as PromMetricJson[];
      const data = toResourceMetrics(read, { resource, scope, startTime, time: millisToHrTime(Date.now()) });
      report(await new Promise<ExportResult>((resolve) => exporter.export(data, resolve)));
    } catch (error) {
      report({ code: ExportResultCode.FAILED, error: error instanceof Error ? error : new Error(String(error)) });
    }
  }

  let inFlight: Promise<void> | undefined;
  function start(): Promise<void> {
    const sending = send().finally(() => {
      if (inFlight === sending) inFlight = undefined;
    });
    inFlight = sending;
    return sending;
  }

  let stopped: Promise<void> | undefined;
  let timer: TimerHandle | undefined;
  function tick(): void {
    if (inFlight === undefined) void start();
    timer = clock.setTimeout(tick, config.metrics_export_interval);
  }
  timer = clock.setTimeout(tick, config.metrics_export_interval);

  return {
    exporting: true,
    async exportNow() {
      if (stopped !== undefined) return;
      await inFlight;
      await start();
    },
    shutdown() {
      if (stopped !== undefined) return stopped;
      clock.clearTimeout(timer);
      const last = (async () => {
        await inFlight;
        await start();
        await exporter.shutdown();
      })();
      stopped = within(clock, config.otlp_timeout, last).then(() => undefined);
      return stopped;
    },
  };
}
