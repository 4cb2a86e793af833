/**
 * CPU fairness in real time: `cpu_quota_per_agent` holds a busy agent to its
 * share of time while a light agent beside it on the same worker keeps
 * answering. The order weighted fair queueing gives agents by their
 * `cpu_shares` is deterministic and tested (test/agents/cpu-shares.test.ts);
 * what a quota gives in wall time depends on the machine, so it is measured here.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureExamplesBuilt } from '../scripts/build-examples.js';
import type { CallContext } from '../src/agents/agent-service-types.js';
import type { BusEvent } from '../src/bus/events.js';
import { loadConfig } from '../src/config/load.js';
import { startServer } from '../src/server.js';
import { createLogger } from '../src/telemetry/logger.js';
import { burner, compile } from '../test/agents/agent-wat.js';
import { summarise, type Row } from './harness.js';

const ctx: CallContext = { principal: 'bench', trace_id: 'bench' };
const QUOTA_MILLICORES = 100;

/** A heavy agent with 200 messages of work and `quota`, and a light echo asked once every 50 ms for `seconds`. */
export async function cpuQuota(seconds = 3): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-'));
  const settings = {
    'storage.data_dir': dir,
    'runtime.executor_workers': 1,
    'runtime.cpu_quota_per_agent': `${QUOTA_MILLICORES}m`,
    'runtime.fuel_per_execution': 10_000_000_000,
  };
  const config = loadConfig({ argv: Object.entries(settings).map(([k, v]) => `--${k}=${v}`), env: {}, cwd: dir });
  const server = await startServer(config, createLogger({ level: 'fatal', enabled: false }));
  try {
    const { service } = server;
    const host = server.host()!;
    const deploy = async (module: Uint8Array, name: string) =>
      (await service.deploy({ name, wasm_module: module, capabilities: [], resources: { memory_limit: 0, cpu_shares: 0 } }, ctx)).agent_id;
    const echoPath = (await ensureExamplesBuilt()).get('echo')!;
    const heavy = await deploy(await compile(burner(10_000_000)), 'heavy');
    const light = await deploy(new Uint8Array(readFileSync(echoPath)), 'light');
    const replies = new Map<string, () => void>();
    host.bus.subscribe().subscribe((event: BusEvent) => {
      if (event.kind === 'message' && event.direction === 'delivered' && event.message.in_reply_to !== undefined) replies.get(event.message.in_reply_to)?.();
    });
    const ask = async (receiver: string): Promise<void> => {
      const { message_id } = await service.send({ receiver, message_type: 'request', content: 'ping' }, ctx);
      // The reply comes from a worker, in a later turn of the event loop than this one.
      await new Promise<void>((resolve) => replies.set(message_id, resolve));
    };
    for (let i = 0; i < 200; i++) await service.send({ receiver: heavy, message_type: 'request', content: `work ${i}` }, ctx);
    const runtime = host.get(heavy)!;
    const usedBefore = runtime.budget.usedNs;
    const started = performance.now();
    const latencies: number[] = [];
    while (performance.now() - started < seconds * 1000) {
      const asked = performance.now();
      await ask(light);
      latencies.push(performance.now() - asked);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const elapsedMs = performance.now() - started;
    const share = (runtime.budget.usedNs - usedBefore) / 1e6 / elapsedMs;
    const light50 = summarise(latencies);
    // 100m over the run, plus at most one window's burst and one execution's overshoot.
    const bound = (QUOTA_MILLICORES / 1000) * 2.5;
    return [
      { name: `busy agent's share of time at cpu_quota_per_agent ${QUOTA_MILLICORES}m (1 worker)`, unit: 'ratio', median: share, target: `≤ ${bound}`, ok: share <= bound && runtime.throttledCount > 0 },
      { name: '  light agent beside it: request → reply', unit: 'ms', median: light50.median, p99: light50.p99, target: 'p50 < 250 ms, max < 1 s', ok: light50.median < 250 && Math.max(...latencies) < 1_000 },
    ];
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
