import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ExportResultCode } from '@opentelemetry/core';
import { createSimulatedClock } from '../../supervisors/index.js';
import { createExportReporter, TRACE_EXPORT_MESSAGES } from '../../src/telemetry/export-reporter.js';
import { endpointForLog } from '../../src/telemetry/otlp-exporter.js';
import { capturedLogger } from './telemetry-fixtures.js';

const FAILED = { code: ExportResultCode.FAILED, error: new Error('connect ECONNREFUSED') };
const OK = { code: ExportResultCode.SUCCESS };

test('export failures: the first at once, then one line per interval counting the others, and one when it recovers', () => {
  const clock = createSimulatedClock();
  const { log, capture } = capturedLogger();
  const report = createExportReporter({ log, clock, endpoint: 'grpc://collector:4317', messages: TRACE_EXPORT_MESSAGES, intervalMs: 60_000 });
  report(FAILED);
  for (let i = 0; i < 5; i++) {
    clock.increment(10_000);
    report(FAILED);
  }
  assert.equal(capture.records().length, 1, 'one line within the interval');
  clock.increment(10_000);
  report(FAILED);
  report(OK);
  report(OK);
  const [first, second, recovered] = capture.records();
  assert.equal(first?.failures_since_last_report, 1);
  assert.equal(first?.reason, 'connect ECONNREFUSED');
  assert.equal(first?.endpoint, 'grpc://collector:4317');
  assert.equal(second?.failures_since_last_report, 6);
  assert.equal(recovered?.msg, 'trace export recovered');
  assert.equal(capture.records().length, 3);
});

test('the logged endpoint carries no credentials, path or query', () => {
  assert.equal(endpointForLog({ protocol: 'http', url: 'https://user:secret@otlp.example.com/v1/traces?key=k' }), 'https://otlp.example.com');
  assert.equal(endpointForLog({ protocol: 'grpc', url: 'http://collector:4317' }), 'grpc://collector:4317');
  assert.equal(endpointForLog({ protocol: 'grpc', url: 'https://collector:443' }), 'grpcs://collector:443');
});
