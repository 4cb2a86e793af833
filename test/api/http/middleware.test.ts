/** The pipeline's middleware on small Koa apps over loopback: each concern alone. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import Koa, { type Middleware } from 'koa';
import type { GatewayState } from '../../../src/api/http/gateway-state.js';
import { deadlineMiddleware } from '../../../src/api/http/middleware-deadline.js';
import { errorMiddleware } from '../../../src/api/http/middleware-errors.js';
import { jsonBodyMiddleware } from '../../../src/api/http/middleware-json-body.js';
import { noRouteMiddleware } from '../../../src/api/http/middleware-no-route.js';
import { telemetryMiddleware } from '../../../src/api/http/middleware-telemetry.js';
import { untracedTracing } from '../../../src/api/api-call.js';
import { SvcError } from '../../../src/errors/svc-error.js';
import { createSimulatedClock } from '../../../supervisors/index.js';

/** Serves `middleware` after telemetry (no routes, so no API spans: only trace ids) and error mapping, runs `fn` against it, closes. */
async function withApp(middleware: Array<Middleware<GatewayState>>, fn: (base: string) => Promise<void>): Promise<void> {
  const app = new Koa<GatewayState>();
  for (const m of [telemetryMiddleware({ tracing: untracedTracing() }, []), errorMiddleware(), ...middleware]) app.use(m);
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  try {
    await fn(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
}

test('errors: SvcError with its status, anything else INTERNAL without its text', async () => {
  await withApp(
    [
      (ctx) => {
        if (ctx.path === '/svc') throw new SvcError('ALREADY_EXISTS', 'taken', { name: 'x' });
        throw new TypeError('cannot read properties of undefined at /srv/secret.ts:12');
      },
    ],
    async (base) => {
      const svc = await fetch(`${base}/svc`, { headers: { 'x-trace-id': 'ab'.repeat(16) } });
      assert.equal(svc.status, 409);
      assert.deepEqual(await svc.json(), { code: 'ALREADY_EXISTS', message: 'taken', trace_id: 'ab'.repeat(16), metadata: { name: 'x' } });
      const internal = await fetch(`${base}/boom`);
      assert.equal(internal.status, 500);
      const body = (await internal.json()) as { message: string; trace_id: string };
      assert.equal(body.message, 'internal error');
      assert.equal(internal.headers.get('x-trace-id'), body.trace_id);
    },
  );
});

test('deadline: a call that overruns answers 504 DEADLINE_EXCEEDED on the injected clock, the deadline is in the state', async () => {
  const clock = createSimulatedClock();
  let deadline: number | undefined;
  let entered: () => void = () => undefined;
  const slowEntered = new Promise<void>((resolve) => (entered = resolve));
  await withApp(
    [
      deadlineMiddleware(50, clock),
      async (ctx) => {
        deadline = ctx.state.deadline;
        if (ctx.path === '/slow') {
          entered();
          await new Promise(() => undefined); // never answers: only the deadline ends the call
        }
        ctx.body = { ok: true };
      },
    ],
    async (base) => {
      const started = Date.now();
      const slow = fetch(`${base}/slow`);
      await slowEntered;
      assert.equal(clock.pendingTimers(), 1);
      await clock.advance(49);
      assert.equal(clock.pendingTimers(), 1, 'not yet expired at 49 ms');
      await clock.advance(1);
      const answer = await slow;
      assert.equal(answer.status, 504);
      assert.equal(((await answer.json()) as { code: string }).code, 'DEADLINE_EXCEEDED');
      assert.ok(deadline !== undefined && deadline >= started + 50 && deadline <= Date.now() + 50);
      assert.equal((await fetch(`${base}/fast`)).status, 200);
      assert.equal(clock.pendingTimers(), 0, 'an answered call clears its timer');
    },
  );
});

test('json body: only where a route takes one; Content-Type checked; the limit is PAYLOAD_TOO_LARGE', async () => {
  await withApp(
    [
      jsonBodyMiddleware({ limitBytes: 64, expectsBody: (method, path) => method === 'POST' && path === '/body' }),
      (ctx) => {
        ctx.body = { got: ctx.request.body ?? null };
      },
    ],
    async (base) => {
      const post = (path: string, body: string, type = 'application/json') => fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': type }, body });
      assert.deepEqual(await (await post('/body', '{"a":1}')).json(), { got: { a: 1 } });
      assert.deepEqual(await (await post('/other', 'anything', 'text/plain')).json(), { got: null });
      const wrong = await post('/body', '{"a":1}', 'text/plain');
      assert.deepEqual([wrong.status, ((await wrong.json()) as { metadata: { field: string } }).metadata.field], [400, 'Content-Type']);
      const big = await post('/body', JSON.stringify({ a: 'x'.repeat(100) }));
      assert.deepEqual([big.status, ((await big.json()) as { metadata: { limit: string } }).metadata.limit], [413, '64']);
    },
  );
});

test('no route: NOT_FOUND; 405 with Allow when the path answers other methods', async () => {
  await withApp([noRouteMiddleware((path) => (path === '/known' ? ['GET', 'POST'] : []))], async (base) => {
    const wrong = await fetch(`${base}/known`, { method: 'DELETE' });
    assert.deepEqual([wrong.status, wrong.headers.get('allow')], [405, 'GET, HEAD, POST']);
    const unknown = await fetch(`${base}/unknown`);
    assert.deepEqual([unknown.status, unknown.headers.get('allow')], [404, null]);
  });
});
