/**
 * What authentication costs (issue 42's targets), measured in one run on two
 * servers in this process, the same but for `security.auth_enabled`:
 * - REST and gRPC `Health` (open: no credential is read) and `ListAgents`
 *   (authenticated and authorized) p50 with an API key and with a JWT,
 *   against the same call with auth off; one request in flight, the
 *   variants alternating request by request so all see the same machine;
 * - gRPC `SendMessage` throughput to an echo agent with a JWT against auth
 *   off, 32 calls in flight, rounds alternating.
 * Rate limits stay on (the defaults) on both servers, generous enough not
 * to refuse anything. Shaped for bench/run.ts (`SECURITY_BENCHMARKS`); also
 * runs alone: `node --import tsx bench/security.bench.ts`.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { renderTable, summarise, type Row } from './harness.js';
import { createGrpcClient, type ClientCredentials, type GrpcClient } from '../src/api/grpc/grpc-client.js';
import { loadConfig } from '../src/config/load.js';
import { startListeners, type Listeners } from '../src/listeners.js';
import { startServer, type Server } from '../src/server.js';
import { createLogger } from '../src/telemetry/logger.js';

const WARMUP = 500;
const SAMPLES = 3_000;
const SEND_IN_FLIGHT = 32;
const SEND_PER_ROUND = 10_000;
const SEND_ROUNDS = 3;
const ADMIN_KEY = `svc_benchbenchbench2_${'B'.repeat(43)}`;
const ECHO = readFileSync(fileURLToPath(new URL('../examples/build/echo.wasm', import.meta.url)));

interface Running {
  server: Server;
  listeners: Listeners;
  httpPort: number;
  close(): Promise<void>;
}

async function start(authEnabled: boolean): Promise<Running> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-security-'));
  const config = loadConfig({
    // The mailbox holds what the echo agent has not handled yet: the figure is the door's, not the agent's.
    argv: [`--storage.data_dir=${dir}`, '--server.http_addr=127.0.0.1:0', '--server.grpc_addr=127.0.0.1:0', '--server.metrics_addr=127.0.0.1:0', '--runtime.executor_workers=1', '--runtime.mailbox_size=1000000'],
    env: { SVC_SECURITY_AUTH_ENABLED: String(authEnabled), SVC_SECURITY_BOOTSTRAP_ADMIN_KEY: ADMIN_KEY, SVC_SECURITY_RATE_LIMIT_PER_KEY: '100000000' },
  });
  const log = createLogger({ level: 'fatal', enabled: false });
  let listeners: Listeners | undefined;
  const server = await startServer(config, log, { cwd: dir, whileStarting: async (s) => void (listeners = await startListeners(s, config, log)) });
  const bound = listeners as Listeners;
  return {
    server,
    listeners: bound,
    httpPort: Number(bound.addresses.http.split(':').pop()),
    async close() {
      await bound.stop();
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function timedGet(agent: Agent, port: number, path: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const began = process.hrtime.bigint();
    const req = request({ host: '127.0.0.1', port, path, agent, headers }, (res) => {
      res.on('data', () => undefined);
      res.on('end', () => (res.statusCode === 200 ? resolve(Number(process.hrtime.bigint() - began) / 1000) : reject(new Error(`${path}: ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end();
  });
}

async function timed(call: () => Promise<unknown>): Promise<number> {
  const began = process.hrtime.bigint();
  await call();
  return Number(process.hrtime.bigint() - began) / 1000;
}

interface Variant {
  name: string;
  rest: () => Promise<number>;
  grpc: () => Promise<number>;
}

/** Alternates the variants call by call; answers each one's p50 and p99. */
async function alternate(variants: readonly Variant[], door: 'rest' | 'grpc'): Promise<Array<{ median: number; p99: number }>> {
  for (let i = 0; i < WARMUP; i++) for (const v of variants) await v[door]();
  const samples = variants.map(() => [] as number[]);
  for (let i = 0; i < SAMPLES; i++) {
    for (const [j, v] of variants.entries()) samples[j]?.push(await v[door]());
  }
  return samples.map((s) => summarise(s));
}

async function sendRound(client: GrpcClient, receiver: string): Promise<number> {
  let next = 0;
  const began = process.hrtime.bigint();
  const worker = async (): Promise<void> => {
    while (next < SEND_PER_ROUND) {
      next += 1;
      await client.send({ receiver, message_type: 'inform', content: 'x' });
    }
  };
  await Promise.all(Array.from({ length: SEND_IN_FLIGHT }, worker));
  return SEND_PER_ROUND / (Number(process.hrtime.bigint() - began) / 1e9);
}

export async function securityOverhead(): Promise<Row[]> {
  const off = await start(false);
  const on = await start(true);
  const clients: GrpcClient[] = [];
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });
  const client = (running: Running, presented: ClientCredentials): GrpcClient => {
    const made = createGrpcClient(running.listeners.addresses.grpc, {}, undefined, presented);
    clients.push(made);
    return made;
  };
  try {
    const admin = client(on, { apiKey: ADMIN_KEY });
    const key = (await admin.createKey({ name: 'bench', roles: ['operator', 'agent'] })).api_key;
    const token = (await client(on, { apiKey: key }).createToken()).access_token;
    const plain = client(off, {});
    const byKey = client(on, { apiKey: key });
    const byToken = client(on, { token });
    const variant = (name: string, running: Running, headers: Record<string, string>, grpc: GrpcClient, path: string, rpc: (c: GrpcClient) => Promise<unknown>): Variant => ({
      name,
      rest: () => timedGet(agent, running.httpPort, path, headers),
      grpc: () => timed(() => rpc(grpc)),
    });
    const rows: Row[] = [];
    for (const [operation, path, rpc] of [
      ['Health', '/api/v1/health', (c: GrpcClient) => c.health()],
      ['ListAgents', '/api/v1/agents?page_size=1', (c: GrpcClient) => c.list({ page_size: 1 })],
    ] as const) {
      const variants = [
        variant('auth off', off, {}, plain, path, rpc),
        variant('API key', on, { 'x-api-key': key }, byKey, path, rpc),
        variant('JWT', on, { authorization: `Bearer ${token}` }, byToken, path, rpc),
      ];
      for (const door of ['rest', 'grpc'] as const) {
        const [base, ...measured] = await alternate(variants, door);
        if (base === undefined) continue;
        const label = `${door === 'rest' ? 'REST' : 'gRPC'} ${operation}`;
        rows.push({ name: `${label}, auth off`, unit: 'µs', median: base.median, p99: base.p99 });
        measured.forEach((m, i) => {
          rows.push({
            name: `${label}, ${variants[i + 1]?.name ?? ''}`,
            unit: 'µs',
            median: m.median,
            p99: m.p99,
            baseline: { name: 'auth off', median: base.median },
            target: 'p50 ≤ 1.2× auth off',
            ok: m.median <= 1.2 * base.median,
          });
        });
      }
    }

    const offAgent = (await client(off, {}).deploy({ name: 'bench-echo', wasm_module: ECHO })).agent_id;
    const onAgent = (await byKey.deploy({ name: 'bench-echo', wasm_module: ECHO })).agent_id;
    await sendRound(plain, offAgent);
    await sendRound(byToken, onAgent);
    const rates = { off: [] as number[], jwt: [] as number[] };
    for (let round = 0; round < SEND_ROUNDS; round++) {
      rates.off.push(await sendRound(plain, offAgent));
      rates.jwt.push(await sendRound(byToken, onAgent));
    }
    const offRate = summarise(rates.off).median;
    const jwtRate = summarise(rates.jwt).median;
    rows.push(
      { name: 'gRPC SendMessage, auth off', unit: 'msg/s', median: offRate },
      { name: 'gRPC SendMessage, JWT', unit: 'msg/s', median: jwtRate, baseline: { name: 'auth off', median: offRate }, target: '≥ 0.9× auth off', ok: jwtRate >= 0.9 * offRate },
    );
    return rows;
  } finally {
    for (const c of clients) c.close();
    agent.destroy();
    await on.close();
    await off.close();
  }
}

export const SECURITY_BENCHMARKS: ReadonlyArray<[string, () => Promise<Row[]>]> = [['security', securityOverhead]];

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(renderTable(await securityOverhead()));
}
