/**
 * `svc start` starting and stopping on SIGTERM, seen from outside as an
 * operator's load balancer sees it. While the services start (the workers
 * boot, stored agents are restored) the HTTP listener already answers: /ready
 * with 503 (starting), /health with 200, the API with UNAVAILABLE (starting);
 * it used to bind only at the end, so the port refused. While the agents
 * drain, it still answers, /ready with 503 (draining) and /health with 200,
 * and the process then exits 0. The listeners used to close before the
 * agents drained, so /ready was never 503: the port just went dark.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { example } from '../agents/agent-fixtures.js';
import { seedAgents } from '../integration/svc-process.js';
import { startCli, type Running } from './run-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-drain-'));
const running: Running[] = [];
after(async () => {
  for (const r of running) r.child.kill('SIGKILL');
  await Promise.all(running.map((r) => r.done));
  rmSync(dir, { recursive: true, force: true });
});

/** A data directory of its own for each server, so one left running by a failed test cannot hold the next one's lock. */
function ownDir(name: string): string {
  const own = join(dir, name);
  mkdirSync(own);
  return own;
}

const EPHEMERAL = { SVC_HTTP_ADDR: '127.0.0.1:0', SVC_GRPC_ADDR: '127.0.0.1:0', SVC_METRICS_ADDR: '127.0.0.1:0' };

/** The `listening` line's HTTP address, once the server wrote it. */
function httpAddress(r: Running): Promise<string> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    r.child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const line = stdout.split('\n').find((l) => l.includes('"msg":"listening"'));
      if (line !== undefined) resolve((JSON.parse(line) as { http: string }).http);
    });
    void r.done.then((run) => reject(new Error(`svc exited (${run.code}) before listening: ${run.stderr}`)));
  });
}

async function probe(url: string): Promise<number | 'refused'> {
  try {
    const res = await fetch(url);
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 'refused';
  }
}

/** A loopback port free a moment ago: `listening` names the address only once the start is over. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

describe('svc start: starting', () => {
  it('answers /ready 503 (starting), /health 200 and API calls UNAVAILABLE while the services start, then /ready 200', async () => {
    const port = await freePort();
    const http = `127.0.0.1:${port}`;
    // Stored agents to restore make the start long enough to watch, however fast the build.
    const cwd = ownDir('starting');
    seedAgents(join(cwd, 'data'), Array.from({ length: 300 }, (_, i) => `stored-${i}`));
    const r = startCli(['start'], { cwd, env: { ...EPHEMERAL, SVC_HTTP_ADDR: http, SVC_RUNTIME_EXECUTOR_WORKERS: '2' } });
    running.push(r);
    const listening = httpAddress(r);
    let ready: { status: number | 'refused'; reason?: string } = { status: 'refused' };
    const seen: Array<number | 'refused'> = [];
    let health: number | 'refused' = 'refused';
    let api: { status: number; reason?: string } | undefined;
    for (let tries = 0; ready.status !== 200 && tries < 2_000; tries++) {
      try {
        // The API and /health first, /ready after: when /ready still says starting, both were answered while starting.
        let during: { health: number; api: { status: number; reason?: string } } | undefined;
        if (api === undefined) {
          const h = await fetch(`http://${http}/health`);
          await h.arrayBuffer();
          const listed = await fetch(`http://${http}/api/v1/agents`);
          during = { health: h.status, api: { status: listed.status, reason: ((await listed.json()) as { metadata?: { reason?: string } }).metadata?.reason } };
        }
        const res = await fetch(`http://${http}/ready`);
        // A 503 is an Error body, its reason in metadata.
        const body = (await res.json()) as { metadata?: { reason?: string } };
        const reason = body.metadata?.reason;
        ready = { status: res.status, ...(reason === undefined ? {} : { reason }) };
        if (res.status === 503 && during !== undefined) ({ health, api } = during);
      } catch {
        ready = { status: 'refused' };
      }
      if (seen.at(-1) !== ready.status) seen.push(ready.status);
      if (ready.status === 503) assert.equal(ready.reason, 'starting');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    assert.deepEqual(seen.filter((s) => s !== 'refused'), [503, 200], `/ready while starting: ${JSON.stringify(seen)}`);
    assert.equal(health, 200);
    assert.deepEqual(api, { status: 503, reason: 'starting' });
    assert.equal(await listening, http, '`listening` names the address it bound, once started');
    r.child.kill('SIGTERM');
    assert.equal((await r.done).code, 0);
  });
});

describe('svc start: draining on SIGTERM', () => {
  it('answers /ready 503 (draining) and /health 200 while an execution in flight drains, then exits 0', async () => {
    const r = startCli(['start'], { cwd: ownDir('draining'), env: { ...EPHEMERAL, SVC_RUNTIME_AGENT_SHUTDOWN_TIMEOUT: '1500ms', SVC_RUNTIME_EXECUTION_SLICE: '0' } });
    running.push(r);
    const http = await httpAddress(r);
    const api = `http://${http}/api/v1`;
    const deployed = await fetch(`${api}/agents`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'spinner', wasm_module: Buffer.from(example('crasher')).toString('base64') }),
    });
    assert.equal(deployed.status, 201);
    const { agent_id } = (await deployed.json()) as { agent_id: string };
    // "loop" spins until the shutdown timeout cuts it.
    const sent = await fetch(`${api}/agents/${agent_id}/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message_type: 'request', content: 'loop' }) });
    assert.equal(sent.status, 202);
    for (let state = '', tries = 0; state !== 'executing'; tries++) {
      assert.ok(tries < 200, `the agent never executed (${state})`);
      state = ((await (await fetch(`${api}/agents/${agent_id}`)).json()) as { state: string }).state;
    }

    r.child.kill('SIGTERM');
    const seen: Array<[number | 'refused', number | 'refused']> = [];
    while (r.child.exitCode === null && seen.length < 100) {
      seen.push([await probe(`http://${http}/ready`), await probe(`http://${http}/health`)]);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const run = await r.done;
    assert.equal(run.code, 0, run.stderr);
    assert.ok(seen.some(([ready, health]) => ready === 503 && health === 200), `probes after SIGTERM: ${JSON.stringify(seen)}`);
    assert.ok(drainedInLog(run.stdout), 'the agent drained: stopping → stopped');
  });
});

/** Whether the log shows the agent going through stopping to stopped. */
function drainedInLog(stdout: string): boolean {
  const transitions = stdout.split('\n').filter((l) => l.includes('"msg":"agent transition"')).map((l) => JSON.parse(l) as { from: string; to: string });
  return transitions.some((t) => t.from === 'stopping' && t.to === 'stopped');
}
