import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Counter, Registry } from 'prom-client';
import { createMetricsServer, type MetricsServer } from '../../../src/api/http/metrics-server.js';

let registry: Registry;
let server: MetricsServer;
let base: string;
before(async () => {
  registry = new Registry();
  new Counter({ name: 'svc_test_events_total', help: 'Events seen by the test.', registers: [registry] }).inc(3);
  server = createMetricsServer(registry, { address: '127.0.0.1:0' });
  base = `http://${await server.start()}`;
});
after(() => server.stop());

test('GET /metrics: Prometheus text of the registry, process metrics included', async () => {
  const res = await fetch(`${base}/metrics`);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), registry.contentType);
  const text = await res.text();
  assert.match(text, /^# HELP svc_test_events_total Events seen by the test\.$/m);
  assert.match(text, /^svc_test_events_total 3$/m);
  assert.match(text, /^process_cpu_user_seconds_total /m);
  const head = await fetch(`${base}/metrics`, { method: 'HEAD' });
  assert.equal(head.status, 200);
  assert.equal(await head.text(), '');
});

test('a second server on the same registry does not register the defaults twice', async () => {
  const second = createMetricsServer(registry, { address: '127.0.0.1:0' });
  const address = await second.start();
  assert.equal((await fetch(`http://${address}/metrics`)).status, 200);
  await second.stop();
});

test('other paths are 404, other methods 405', async () => {
  assert.equal((await fetch(`${base}/`)).status, 404);
  assert.equal((await fetch(`${base}/api/v1/health`)).status, 404);
  const post = await fetch(`${base}/metrics`, { method: 'POST' });
  assert.deepEqual([post.status, post.headers.get('allow')], [405, 'GET, HEAD']);
});

test('start returns the bound address; stop releases the port', async () => {
  const own = createMetricsServer(new Registry(), { address: '127.0.0.1:0', collectDefaults: false });
  const address = await own.start();
  assert.match(address, /^127\.0\.0\.1:\d+$/);
  assert.equal(own.address, address);
  assert.equal(await (await fetch(`http://${address}/metrics`)).text(), '\n');
  await own.stop();
  await assert.rejects(fetch(`http://${address}/metrics`));
});
