/**
 * What a failing collector costs the log: the first failure at once, then at
 * most one line per interval counting the failures in between, and one line
 * when exports succeed again. Never a line per batch, and never an error in
 * an API call: exports run off the request path.
 */
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { Clock } from '../../supervisors/index.js';
import type { Logger } from './logger.js';

/** A failing collector is reported at most once per this interval. */
export const EXPORT_FAILURE_LOG_INTERVAL_MS = 60_000;

/** The texts of a reporter's two lines, which name the signal and what its failure costs. */
export interface ExportReportMessages {
  failed: string;
  recovered: string;
}

export const TRACE_EXPORT_MESSAGES: ExportReportMessages = {
  failed: 'trace export failed; the spans of that batch are dropped',
  recovered: 'trace export recovered',
};

export const METRIC_EXPORT_MESSAGES: ExportReportMessages = {
  failed: 'metric export failed; the next export sends the values again',
  recovered: 'metric export recovered',
};

export interface ExportReporterOptions {
  log?: Logger;
  clock: Clock;
  /** As `endpointForLog` gives it. */
  endpoint: string;
  messages: ExportReportMessages;
  intervalMs?: number;
}

export function createExportReporter(options: ExportReporterOptions): (result: ExportResult) => void {
  const { log, clock, endpoint, messages } = options;
  const interval = options.intervalMs ?? EXPORT_FAILURE_LOG_INTERVAL_MS;
  let lastLine = -Infinity;
  let unreported = 0;
  let failing = false;
  return (result) => {
    if (result.code === ExportResultCode.SUCCESS) {
      if (failing) log?.info({ endpoint, unreported_failures: unreported }, messages.recovered);
      failing = false;
      unreported = 0;
      return;
    }
    failing = true;
    const now = clock.now();
    if (now - lastLine < interval) {
      unreported += 1;
      return;
    }
    lastLine = now;
    log?.warn(
      // The reason, not the error: its stack is the exporter's internals, the same every time.
      { reason: result.error?.message ?? 'unknown', endpoint, failures_since_last_report: unreported + 1, report_interval_ms: interval },
      messages.failed,
    );
    unreported = 0;
  };
}
