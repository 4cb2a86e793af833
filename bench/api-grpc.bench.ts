/**
 * gRPC door overhead, each figure beside a bare grpc-js server measured in
 * the same run by the same kind of client:
 * - `Health` through the whole door (connection limiter, call context and
 *   deadline timer, the real AgentService, error mapping) against a bare
 *   grpc-js unary handler answering a constant of the same shape, one call in
 *   flight, the two alternating call by call so both see the same machine;
 * - `SendMessage` to a deployed echo agent at 1,000 requests/s offered, open
 *   loop (each request leaves at its scheduled time whether or not earlier
 *   ones answered, so a slow answer cannot hide the ones queued behind it),
 *   from a client in its own process: once with grpc-js's client
 *   (bench/grpc-load-generator.ts) and once with plain HTTP/2 frames
 *   (bench/grpc-h2-load-generator.ts), whose own delays weigh less in the
 *   latencies it reports.
 * Shaped for bench/run.ts (`GRPC_BENCHMARKS`); also runs alone:
 * `node --import tsx bench/api-grpc.bench.ts`.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Server, ServerCredentials, loadPackageDefinition, type ServiceDefinition } from '@grpc/grpc-js';
import type { LoadReport } from './grpc-load-generator.js';
import { renderTable, summarise, type Row } from './harness.js';
import { createGrpcClient, type GrpcClient, type MessageInput } from '../src/api/grpc/grpc-client.js';
import { createGrpcServer, type GrpcServer } from '../src/api/grpc/grpc-server.js';
import { grpcServerOptionsFrom } from '../src/api/grpc/grpc-server-options.js';
import { loadManagementProto } from '../src/api/proto.js';
import { loadConfig } from '../src/config/load.js';
import { startServer, type Server as SvcServer } from '../src/server.js';
import { createLogger } from '../src/telemetry/logger.js';

const HEALTH_WARMUP = 2_000;
const HEALTH_SAMPLES = 20_000;
/** 1,000 requests/s offered for this many seconds, after a warm-up second at the same rate. */
const SEND_RATE = 1_000;
const SEND_SECONDS = 5;

interface Door {
  address: string;
  svc: SvcServer;
  grpc: GrpcServer;
  client: GrpcClient;
  close(): Promise<void>;
}

async function startDoor(): Promise<Door> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-grpc-'));
  const config = loadConfig({ argv: [`--storage.data_dir=${dir}`, '--server.grpc_addr=127.0.0.1:0', '--runtime.executor_workers=1'], env: {} });
  const svc = await startServer(config, createLogger({ level: 'fatal', enabled: false }), { cwd: dir });
  const grpc = createGrpcServer(svc.service, grpcServerOptionsFrom(config));
  const address = await grpc.start();
  const client = createGrpcClient(address);
  return {
    address,
    svc,
    grpc,
    client,
    async close() {
      client.close();
      await grpc.stop();
      await svc.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A bare grpc-js server of the same service: Health and SendMessage answer constants; the floor any handler pays. */
async function startBare(): Promise<{ address: string; client: GrpcClient; close(): Promise<void> }> {
  const grpcObject = loadPackageDefinition(loadManagementProto().packageDefinition) as unknown as { svc: { v1: { ManagementService: { service: ServiceDefinition } } } };
  const server = new Server();
  const health = { status: 'healthy', version: '0.0.0', agents: { running: 1, capacity: 10_000 }, trace_id: '4bf92f3577b34da6a3ce929d0e0e4736' };
  server.addService(grpcObject.svc.v1.ManagementService.service, {
    Health: (_call: unknown, callback: (error: null, value: unknown) => void) => callback(null, health),
    SendMessage: (_call: unknown, callback: (error: null, value: unknown) => void) => callback(null, { message_id: '01J00000000000000000000000' }),
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
  );
  const address = `127.0.0.1:${port}`;
  const client = createGrpcClient(address);
  return {
    address,
    client,
    close: () =>
      new Promise((resolve) => {
        client.close();
        server.tryShutdown(() => resolve());
      }),
  };
}

async function timed(call: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await call();
  return Number(process.hrtime.bigint() - start) / 1000;
}

export async function grpcHealth(): Promise<Row[]> {
  const door = await startDoor();
  const bare = await startBare();
  try {
    for (let i = 0; i < HEALTH_WARMUP; i++) {
      await bare.client.health();
      await door.client.health();
    }
    const baseline: number[] = [];
    const measured: number[] = [];
    for (let i = 0; i < HEALTH_SAMPLES; i++) {
      baseline.push(await timed(() => bare.client.health()));
      measured.push(await timed(() => door.client.health()));
    }
    const base = summarise(baseline);
    const door_ = summarise(measured);
    return [
      {
        name: 'gRPC Health (real AgentService)',
        unit: 'µs',
        median: door_.median,
        p99: door_.p99,
        baseline: { name: 'bare grpc-js unary', median: base.median },
        target: 'p50 ≤ 1.3× bare grpc-js, p99 < 1 ms',
        ok: door_.median <= 1.3 * base.median && door_.p99 < 1000,
      },
      { name: '  bare grpc-js unary handler, same client', unit: 'µs', median: base.median, p99: base.p99 },
    ];
  } finally {
    await bare.close();
    await door.close();
  }
}

/** The open-loop clients, each run in its own process: grpc-js's client, and plain HTTP/2 frames (bench/grpc-h2-load-generator.ts). */
const LOAD_GENERATORS = {
  'grpc-js client': fileURLToPath(new URL('./grpc-load-generator.ts', import.meta.url)),
  'plain HTTP/2 client': fileURLToPath(new URL('./grpc-h2-load-generator.ts', import.meta.url)),
} as const;
type LoadGenerator = keyof typeof LOAD_GENERATORS;
const TSX = import.meta.resolve('tsx');

/** Runs `generator` against `address`; resolves with its latencies (µs), rejects if any call failed. */
function offeredLoad(generator: LoadGenerator, address: string, message: MessageInput): Promise<LoadReport> {
  return new Promise((resolve, reject) => {
    const args = ['--expose-gc', '--import', TSX, LOAD_GENERATORS[generator], address, String(SEND_RATE), String(SEND_SECONDS), JSON.stringify(message)];
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`${generator} load generator exited ${code}`));
      const report = JSON.parse(out) as LoadReport;
      if (report.failed > 0) return reject(new Error(`${generator}: ${report.failed} SendMessage calls failed`));
      resolve(report);
    });
  });
}

/**
 * The machine's own floor: how late a 1 ms timer fires in an otherwise idle
 * process over the same time as a load run (µs). Stalls seen here (the VM's
 * vCPUs descheduled by its host) reach every process, server and client alike.
 */
const IDLE_TIMER = `
const late = []; let last = process.hrtime.bigint();
const timer = setInterval(() => { const now = process.hrtime.bigint(); late.push(Number(now - last) / 1000 - 1000); last = now; }, 1);
setTimeout(() => { clearInterval(timer); process.stdout.write(JSON.stringify(late)); }, ${SEND_SECONDS * 1000});
`;

function idleTimerLateness(): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', IDLE_TIMER], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out) as number[]) : reject(new Error(`timer probe exited ${code}`))));
  });
}

export async function grpcSendMessage(): Promise<Row[]> {
  const door = await startDoor();
  const bare = await startBare();
  try {
    const echo = new Uint8Array(readFileSync(fileURLToPath(new URL('../examples/build/echo.wasm', import.meta.url))));
    const { agent_id } = await door.client.deploy({ name: 'bench-echo', wasm_module: echo });
    const message: MessageInput = { receiver: agent_id, message_type: 'inform', content: 'bench' };
    const rows: Row[] = [];
    for (const generator of Object.keys(LOAD_GENERATORS) as LoadGenerator[]) {
      const door_ = await offeredLoad(generator, door.address, message);
      const bare_ = await offeredLoad(generator, bare.address, message);
      const measured = summarise(door_.latencies);
      const base = summarise(bare_.latencies);
      rows.push(
        {
          name: `gRPC SendMessage to a local echo agent, ${SEND_RATE}/s offered, ${generator}`,
          unit: 'µs',
          median: measured.median,
          p99: measured.p99,
          baseline: { name: 'bare grpc-js unary', median: base.median },
          target: 'p99 < 1 ms',
          ok: measured.p99 < 1000,
        },
        { name: `  bare grpc-js SendMessage, same rate and client`, unit: 'µs', median: base.median, p99: base.p99 },
        {
          name: `  p99 of the client's own event-loop delay, svc run (max ${Math.round(door_.loopDelayMaxUs)} µs)`,
          unit: 'µs',
          median: door_.loopDelayP99Us,
        },
      );
    }
    const idle = await idleTimerLateness();
    const floor = summarise(idle);
    rows.push({ name: `  an idle process's 1 ms timer, lateness (max ${Math.round(Math.max(...idle))} µs)`, unit: 'µs', median: floor.median, p99: floor.p99 });
    return rows;
  } finally {
    await bare.close();
    await door.close();
  }
}

export const GRPC_BENCHMARKS: ReadonlyArray<[string, () => Promise<Row[]>]> = [
  ['api-grpc-health', grpcHealth],
  ['api-grpc-send', grpcSendMessage],
];

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(renderTable([...(await grpcHealth()), ...(await grpcSendMessage())]));
}
