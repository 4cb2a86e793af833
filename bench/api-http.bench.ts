/**
 * REST gateway overhead: `GET /api/v1/health` through the whole pipeline
 * (trace id, error mapping, probes, deadline, body check, routers, transcode,
 * the real AgentService, JSON encoding) beside a bare Koa route answering a
 * body of the same shape, measured in the same run by the same keep-alive
 * client, one request in flight, the two alternating request by request so
 * both see the same machine state. Shaped for bench/run.ts
 * (`HTTP_BENCHMARKS`); also runs alone: `node --import tsx bench/api-http.bench.ts`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import Koa from 'koa';
import Router from '@koa/router';
import { renderTable, summarise, type Row } from './harness.js';
import { createHttpServer, httpServerOptionsFrom } from '../src/api/http/http-server.js';
import { loadConfig } from '../src/config/load.js';
import { startServer } from '../src/server.js';
import { createLogger } from '../src/telemetry/logger.js';

const WARMUP = 2_000;
const SAMPLES = 20_000;

/** One GET on a kept-alive socket; resolves once the body is read, with the microseconds it took. */
function timedGet(agent: Agent, port: number, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const req = request({ host: '127.0.0.1', port, path, agent }, (res) => {
      res.on('data', () => undefined);
      res.on('end', () => {
        if (res.statusCode !== 200) reject(new Error(`${path}: ${res.statusCode}`));
        else resolve(Number(process.hrtime.bigint() - start) / 1000);
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** A bare Koa route with a body like Health's; the floor any Koa route pays. */
async function bareKoa(): Promise<{ port: number; close: () => Promise<void> }> {
  const app = new Koa();
  const router = new Router();
  router.get('/api/v1/health', (ctx) => {
    ctx.body = { status: 'healthy', version: '0.0.0', agents: { running: 0, capacity: 10_000 }, trace_id: '4bf92f3577b34da6a3ce929d0e0e4736' };
  });
  app.use(router.routes());
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise((r) => server.close(() => r(undefined))),
  };
}

export async function restHealth(): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-http-'));
  const config = loadConfig({ argv: [`--storage.data_dir=${dir}`, '--server.http_addr=127.0.0.1:0', '--runtime.executor_workers=1'], env: {} });
  const log = createLogger({ level: 'fatal', enabled: false });
  const server = await startServer(config, log, { cwd: dir });
  const gateway = createHttpServer(server.service, httpServerOptionsFrom(config, { log }));
  const gatewayPort = Number((await gateway.start()).split(':').pop());
  const bare = await bareKoa();
  // One socket per server, reused for every request: the figure is the request path, not connection setup.
  const agent = new Agent({ keepAlive: true, maxSockets: 2 });
  try {
    for (let i = 0; i < WARMUP; i++) {
      await timedGet(agent, bare.port, '/api/v1/health');
      await timedGet(agent, gatewayPort, '/api/v1/health');
    }
    const baseline: number[] = [];
    const measured: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      baseline.push(await timedGet(agent, bare.port, '/api/v1/health'));
      measured.push(await timedGet(agent, gatewayPort, '/api/v1/health'));
    }
    const base = summarise(baseline);
    const gw = summarise(measured);
    return [
      {
        name: 'REST GET /api/v1/health (real AgentService)',
        unit: 'µs',
        median: gw.median,
        p99: gw.p99,
        baseline: { name: 'bare Koa route', median: base.median },
        target: 'p50 ≤ 1.3× bare Koa, p99 < 1 ms',
        ok: gw.median <= 1.3 * base.median && gw.p99 < 1000,
      },
      { name: '  bare Koa route, same client', unit: 'µs', median: base.median, p99: base.p99 },
    ];
  } finally {
    agent.destroy();
    await bare.close();
    await gateway.stop();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export const HTTP_BENCHMARKS: ReadonlyArray<[string, () => Promise<Row[]>]> = [['api-http', restHealth]];

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(renderTable(await restHealth()));
}
