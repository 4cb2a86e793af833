import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError } from '../../src/config/load.js';
import { parseOtlpEndpoint } from '../../src/telemetry/otlp-endpoint.js';

test('http(s) endpoints get the traces path; grpc(s) endpoints become the gRPC exporter\'s plaintext or TLS URL', () => {
  const cases: [string, ReturnType<typeof parseOtlpEndpoint>][] = [
    ['', undefined],
    ['   ', undefined],
    ['http://collector:4318', { protocol: 'http', url: 'http://collector:4318/v1/traces' }],
    ['http://collector:4318/', { protocol: 'http', url: 'http://collector:4318/v1/traces' }],
    ['https://otlp.example.com/otlp', { protocol: 'http', url: 'https://otlp.example.com/otlp/v1/traces' }],
    ['http://collector:4318/v1/traces', { protocol: 'http', url: 'http://collector:4318/v1/traces' }],
    ['http://[::1]:4318', { protocol: 'http', url: 'http://[::1]:4318/v1/traces' }],
    ['grpc://collector:4317', { protocol: 'grpc', url: 'http://collector:4317' }],
    ['grpc://collector', { protocol: 'grpc', url: 'http://collector:4317' }],
    ['grpcs://collector:443', { protocol: 'grpc', url: 'https://collector:443' }],
    ['grpc://[::1]:4317', { protocol: 'grpc', url: 'http://[::1]:4317' }],
  ];
  for (const [raw, expected] of cases) assert.deepEqual(parseOtlpEndpoint(raw), expected, raw);
});

test('anything else stops the start, naming observability.otlp_endpoint', () => {
  for (const raw of ['collector:4317', 'ftp://collector', 'grpc://collector:4317/v1/traces', 'http://']) {
    assert.throws(
      () => parseOtlpEndpoint(raw),
      (err) => err instanceof ConfigError && err.key === 'observability.otlp_endpoint',
      raw,
    );
  }
});
