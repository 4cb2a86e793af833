/**
 * Runaway isolation (issue 41): an echo's request → reply round trip while 20
 * spinning agents are fed on 2 shared workers, beside the same run without
 * spinners; and how long a deploy takes meanwhile. Measured from the
 * spinners' first messages on, so the time they are still on the shared
 * lane (one slice each) is in the figures.
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
import { watFixture } from '../test/helpers/wat.js';
import { summarise, type Row } from './harness.js';

const ctx: CallContext = { principal: 'bench', trace_id: 'bench' };
const SPINNERS = 20;
const FEED_EVERY_MS = 100;
const PAUSE_MS = 20;

interface Run {
  latencies: number[];
  deployMs: number;
}

async function echoUnder(spinners: number, seconds: number): Promise<Run> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-'));
  const settings = { 'storage.data_dir': dir, 'runtime.executor_workers': 2 };
  const config = loadConfig({ argv: Object.entries(settings).map(([k, v]) => `--${k}=${v}`), env: {}, cwd: dir });
  const server = await startServer(config, createLogger({ level: 'fatal', enabled: false }));
  let feeding = true;
  try {
    const { service } = server;
    const deploy = async (module: Uint8Array, name: string) =>
      (await service.deploy({ name, wasm_module: module, capabilities: [], resources: { memory_limit: 0, cpu_shares: 0 } }, ctx)).agent_id;
    const echoModule = new Uint8Array(readFileSync((await ensureExamplesBuilt()).get('echo')!));
    const echo = await deploy(echoModule, 'echo');
    const ask = async (): Promise<void> => {
      const { message_id } = await service.send({ receiver: echo, message_type: 'request', content: 'ping' }, ctx);
      await new Promise<void>((resolve) => replies.set(message_id, resolve));
      replies.delete(message_id);
    };
    const replies = new Map<string, () => void>();
    server.host()!.bus.subscribe().subscribe((event: BusEvent) => {
      if (event.kind === 'message' && event.message.in_reply_to !== undefined) replies.get(event.message.in_reply_to)?.();
    });
    // The echo has been answering before the spinners come (so it is past its probation).
    await ask();
    const spin = await watFixture('valid/spin.wat');
    const spinning = await Promise.all(Array.from({ length: spinners }, (_, i) => deploy(spin, `spinner-${i}`)));
    const feeder = (async () => {
      while (feeding && spinning.length > 0) {
        await Promise.all(spinning.map((receiver) => service.send({ receiver, message_type: 'request', content: 'spin' }, ctx).catch(() => undefined)));
        await new Promise((resolve) => setTimeout(resolve, FEED_EVERY_MS));
      }
    })();
    const latencies: number[] = [];
    const from = performance.now();
    while (performance.now() - from < seconds * 1000) {
      const asked = performance.now();
      await ask();
      latencies.push(performance.now() - asked);
      await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
    }
    const deployFrom = performance.now();
    await deploy(echoModule, 'late-echo');
    const deployMs = performance.now() - deployFrom;
    feeding = false;
    await feeder;
    return { latencies, deployMs };
  } finally {
    feeding = false;
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function runaways(seconds = 10): Promise<Row[]> {
  const quiet = summarise((await echoUnder(0, seconds)).latencies);
  const loud = await echoUnder(SPINNERS, seconds);
  const busy = summarise(loud.latencies);
  const worst = Math.max(...loud.latencies);
  return [
    {
      name: `echo request → reply, ${SPINNERS} spinners fed (2 shared workers)`,
      unit: 'ms',
      median: busy.median,
      p99: busy.p99,
      baseline: { name: 'no spinners', median: quiet.median },
      target: 'p99 < 100 ms',
      ok: busy.p99 < 100,
    },
    { name: '  worst round trip', unit: 'ms', median: worst },
    { name: '  no spinners: p99', unit: 'ms', median: quiet.p99 },
    { name: '  deploy of an echo beside the spinners', unit: 'ms', median: loud.deployMs, target: '< agent_startup_timeout (10 s)', ok: loud.deployMs < 10_000 },
  ];
}
