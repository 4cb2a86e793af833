import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import { checkProtectedMode, isLoopbackHost } from '../../src/security/protected-mode.js';

test('loopback hosts', () => {
  for (const host of ['127.0.0.1', '127.1.2.3', '::1', '[::1]', 'localhost', '::ffff:127.0.0.1']) assert.equal(isLoopbackHost(host), true, host);
  for (const host of ['0.0.0.0', '::', '10.0.0.1', '192.168.1.1', 'example.com', '::ffff:10.0.0.1', '128.0.0.1']) assert.equal(isLoopbackHost(host), false, host);
});

test('auth off: a non-loopback API listener stops the start, naming allow_unauthenticated; on loopback it starts', () => {
  assert.doesNotThrow(() => checkProtectedMode(loadConfig({ env: {}, cwd: '/' })));
  for (const env of [{ SVC_HTTP_ADDR: '0.0.0.0:8080' }, { SVC_GRPC_ADDR: '[::]:50051' }, { SVC_HTTP_ADDR: '10.1.2.3:80' }]) {
    assert.throws(
      () => checkProtectedMode(loadConfig({ env, cwd: '/' })),
      (err: unknown) => err instanceof ConfigError && err.key === 'security.allow_unauthenticated' && /not a loopback address/.test(err.message),
      JSON.stringify(env),
    );
  }
});

test('auth on, or allow_unauthenticated, lifts the protected mode; the metrics listener never concerned it', () => {
  assert.doesNotThrow(() => checkProtectedMode(loadConfig({ env: { SVC_HTTP_ADDR: '0.0.0.0:8080', SVC_SECURITY_AUTH_ENABLED: 'true' }, cwd: '/' })));
  assert.doesNotThrow(() => checkProtectedMode(loadConfig({ env: { SVC_GRPC_ADDR: '0.0.0.0:50051', SVC_SECURITY_ALLOW_UNAUTHENTICATED: 'true' }, cwd: '/' })));
  assert.doesNotThrow(() => checkProtectedMode(loadConfig({ env: { SVC_METRICS_ADDR: '0.0.0.0:9090' }, cwd: '/' })));
});
