/**
 * Issue 41, item 2: an agent held back by `cpu_quota_per_agent` reads
 * `running` like one that runs; `throttled_seconds` (GetAgent over both
 * doors) and `svc_agent_throttled_seconds_total` tell them apart.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createGrpcClient, type GrpcClient } from '../../src/api/grpc/grpc-client.js';
import { grpcServerOptionsFrom } from '../../src/api/grpc/grpc-server-options.js';
import { createGrpcServer, type GrpcServer } from '../../src/api/grpc/grpc-server.js';
import { burner, compile } from '../agents/agent-wat.js';
import { call, deployEcho, eventually, startGateway, type Gateway } from './http/http-fixtures.js';

/** Iterations of the busy agent: an execution of 100–400 ms, past the 100 ms a 100m quota allows per second. */
const BUSY_ITERATIONS = 60_000_000;

let gw: Gateway;
let grpcServer: GrpcServer;
let grpc: GrpcClient;
before(async () => {
  gw = await startGateway(['--server.grpc_addr=127.0.0.1:0', '--runtime.cpu_quota_per_agent=100m', '--runtime.execution_slice=0']);
  grpcServer = createGrpcServer(gw.server.service, { ...grpcServerOptionsFrom(gw.config), tracing: gw.server.tracing, metrics: gw.server.metrics });
  grpc = createGrpcClient(await grpcServer.start());
});
after(async () => {
  grpc.close();
  await grpcServer.stop();
  await gw.stop();
});

async function throttledMetric(agentId: string): Promise<number | undefined> {
  const { samples } = await gw.server.service.metrics({ principal: 'test', trace_id: 'test' });
  return samples.find((s) => s.name === 'svc_agent_throttled_seconds_total' && s.labels['agent_id'] === agentId)?.value;
}

test('a throttled agent shows its throttled time in GetAgent on both doors and in svc_agent_throttled_seconds_total; one that runs shows 0', async () => {
  const module = Buffer.from(await compile(burner(BUSY_ITERATIONS))).toString('base64');
  const deployed = await call(gw.base, 'POST', '/api/v1/agents', { name: 'busy', wasm_module: module });
  assert.equal(deployed.status, 201, deployed.text);
  const busy = deployed.body.agent_id as string;
  const echo = await deployEcho(gw.base, 'light');
  for (let i = 0; i < 3; i++) assert.equal((await call(gw.base, 'POST', `/api/v1/agents/${busy}/messages`, { message_type: 'request', content: `work ${i}` })).status, 202);
  assert.equal((await call(gw.base, 'POST', `/api/v1/agents/${echo}/messages`, { message_type: 'request', content: 'ping' })).status, 202);

  const rest = await eventually(async () => {
    const answer = await call(gw.base, 'GET', `/api/v1/agents/${busy}`);
    return answer.body.throttled_seconds > 0 ? answer.body : undefined;
  }, 30_000);
  assert.equal(typeof rest.throttled_seconds, 'number');
  const viaGrpc = await grpc.get(busy);
  assert.ok(viaGrpc.throttled_seconds >= rest.throttled_seconds, `gRPC ${viaGrpc.throttled_seconds} after REST ${rest.throttled_seconds}`);
  assert.ok(['running', 'executing'].includes(viaGrpc.state), `a throttled agent reads ${viaGrpc.state}`);
  assert.ok((await throttledMetric(busy))! >= rest.throttled_seconds);

  const light = await grpc.get(echo);
  assert.equal(light.throttled_seconds, 0);
  assert.equal((await call(gw.base, 'GET', `/api/v1/agents/${echo}`)).body.throttled_seconds, 0);
  assert.equal(await throttledMetric(echo), 0, 'an agent never held back reads 0');

  assert.equal((await call(gw.base, 'DELETE', `/api/v1/agents/${busy}`)).status, 200);
  assert.equal(await throttledMetric(busy), undefined, 'an undeployed agent leaves no series');
});
