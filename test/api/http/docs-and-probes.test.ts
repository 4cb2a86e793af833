/** The OpenAPI document and Swagger UI served offline, and the /health and /ready probes. */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import type { Readiness } from '../../../src/api/http/probes.js';
import { call, startGateway, type Gateway } from './http-fixtures.js';

let gw: Gateway;
let readiness: Readiness = { ready: true };
before(async () => {
  gw = await startGateway([], { readiness: () => readiness });
});
after(() => gw.stop());

const swaggerDir = (createRequire(import.meta.url)('swagger-ui-dist/absolute-path.js') as () => string)();

test('GET /api/v1/openapi.json serves the document built from the routes', async () => {
  const answer = await call(gw.base, 'GET', '/api/v1/openapi.json');
  assert.equal(answer.status, 200);
  assert.match(answer.headers.get('content-type') ?? '', /^application\/json/);
  assert.deepEqual(answer.body, gw.http.openApiDocument);
  assert.equal(Object.values(answer.body.paths as Record<string, object>).reduce((n, item) => n + Object.keys(item).length, 0), gw.http.routes.length);
});

test('Swagger UI at /api/v1/docs and /api/v1/docs/, pointing at the document, with its files served locally', async () => {
  for (const path of ['/api/v1/docs', '/api/v1/docs/', '/api/v1/docs/index.html']) {
    const page = await call(gw.base, 'GET', path);
    assert.equal(page.status, 200, path);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    assert.doesNotMatch(page.text, /https?:\/\//, 'no CDN or other remote reference');
    for (const [, src] of page.text.matchAll(/(?:src|href)="([^"]+)"/g)) {
      const asset = await fetch(gw.base + src);
      assert.equal(asset.status, 200, src);
    }
  }
  const init = await call(gw.base, 'GET', '/api/v1/docs/swagger-initializer.js');
  assert.match(init.text, /url: "\/api\/v1\/openapi\.json"/);
  const bundle = await fetch(`${gw.base}/api/v1/docs/swagger-ui-bundle.js`);
  assert.match(bundle.headers.get('content-type') ?? '', /javascript/);
  assert.equal(Buffer.from(await bundle.arrayBuffer()).equals(readFileSync(join(swaggerDir, 'swagger-ui-bundle.js'))), true);
});

test('nothing else under /api/v1/docs reaches the disk', async () => {
  for (const path of ['/api/v1/docs/package.json', '/api/v1/docs/..%2F..%2Fpackage.json', '/api/v1/docs/swagger-ui.js.map', '/api/v1/docs/a/b']) {
    const answer = await call(gw.base, 'GET', path);
    assert.deepEqual([answer.status, answer.body.code], [404, 'NOT_FOUND'], path);
  }
});

test('GET /health: liveness, whatever the readiness', async () => {
  readiness = { ready: false, reason: 'starting' };
  const answer = await call(gw.base, 'GET', '/health');
  assert.deepEqual([answer.status, answer.body], [200, { status: 'ok' }]);
  readiness = { ready: true };
});

test('GET /ready: 200 when ready, 503 UNAVAILABLE with the reason otherwise', async () => {
  assert.deepEqual((await call(gw.base, 'GET', '/ready')).body, { status: 'ready' });
  readiness = { ready: false, reason: 'store closed' };
  const down = await call(gw.base, 'GET', '/ready');
  assert.deepEqual([down.status, down.body.code, down.body.metadata], [503, 'UNAVAILABLE', { reason: 'store closed' }]);
  readiness = { ready: true };
  assert.equal((await call(gw.base, 'GET', '/ready')).status, 200);
  const post = await call(gw.base, 'POST', '/ready', {});
  assert.deepEqual([post.status, post.headers.get('allow')], [405, 'GET, HEAD']);
});

test('while draining /ready is 503 and the API still answers; stop() then refuses connections', async () => {
  const own = await startGateway();
  own.http.drain();
  const ready = await call(own.base, 'GET', '/ready');
  assert.deepEqual([ready.status, ready.body.metadata.reason], [503, 'draining']);
  assert.equal((await call(own.base, 'GET', '/api/v1/health')).status, 200);
  await own.stop();
  await assert.rejects(fetch(`${own.base}/health`));
});
