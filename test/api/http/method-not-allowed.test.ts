/**
 * Issue 44: a method a known path does not serve answers 405 with `Allow`,
 * as HTTP clients expect (it answered 404). The body is the usual Error:
 * code NOT_FOUND, reason method_not_allowed, the methods in `allow`, the
 * call's trace id. HEAD is allowed wherever GET is; a path nothing serves
 * stays 404; the server keeps answering.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { allowHeader } from '../../../src/api/http/middleware-no-route.js';
import { call, startGateway, type Gateway } from './http-fixtures.js';

let gw: Gateway;
before(async () => {
  gw = await startGateway();
});
after(() => gw.stop());

const cases: Array<[string, string, string]> = [
  ['PUT', '/api/v1/agents', 'GET, HEAD, POST'],
  ['PUT', '/api/v1/agents/some-agent', 'DELETE, GET, HEAD, PATCH'],
  ['DELETE', '/api/v1/messages', 'GET, HEAD, POST'],
  ['PUT', '/api/v1/agents/some-agent/messages', 'GET, HEAD, POST'],
  ['POST', '/api/v1/health', 'GET, HEAD'],
  ['OPTIONS', '/api/v1/metrics', 'GET, HEAD'],
  ['DELETE', '/api/v1/openapi.json', 'GET, HEAD'],
  ['POST', '/api/v1/docs', 'GET, HEAD'],
  ['POST', '/health', 'GET, HEAD'],
  ['DELETE', '/ready', 'GET, HEAD'],
];
for (const [method, path, allow] of cases) {
  test(`${method} ${path}: 405, Allow: ${allow}, an Error body`, async () => {
    const answer = await call(gw.base, method, path, method === 'POST' || method === 'PUT' ? {} : undefined, { 'x-trace-id': '4bf92f3577b34da6a3ce929d0e0e4736' });
    assert.equal(answer.status, 405, answer.text);
    assert.equal(answer.headers.get('allow'), allow);
    assert.deepEqual(answer.body, {
      code: 'NOT_FOUND',
      message: `${path} does not answer ${method}; it answers ${allow}`,
      trace_id: '4bf92f3577b34da6a3ce929d0e0e4736',
      metadata: { reason: 'method_not_allowed', method, path, allow: allow.replaceAll(' ', '') },
    });
  });
}

test('a path nothing serves stays 404 without Allow, whatever the method', async () => {
  for (const method of ['GET', 'POST', 'DELETE']) {
    const answer = await call(gw.base, method, '/api/v1/nowhere', method === 'POST' ? {} : undefined);
    assert.deepEqual([answer.status, answer.headers.get('allow'), answer.body.code], [404, null, 'NOT_FOUND']);
  }
});

test('HEAD of a GET route is served, not refused', async () => {
  const head = await fetch(`${gw.base}/api/v1/health`, { method: 'HEAD' });
  assert.equal(head.status, 200);
});

test('a refused request with a body it never read closes the connection, and the server answers the next one', async () => {
  const answer = await call(gw.base, 'PUT', '/api/v1/agents', { name: 'x'.repeat(10_000) });
  assert.equal(answer.status, 405);
  assert.equal((await call(gw.base, 'GET', '/api/v1/health')).status, 200);
});

test('allowHeader adds HEAD beside GET and sorts', () => {
  assert.equal(allowHeader(['POST', 'GET']), 'GET, HEAD, POST');
  assert.equal(allowHeader(['DELETE']), 'DELETE');
});
