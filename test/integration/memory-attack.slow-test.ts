/**
 * The memory attack of issue 41 against a real `svc start` process: a client
 * deploys 5 spinning agents and sends each 1,000 messages of 1 MiB over gRPC
 * (it used to drive the server to 4.3 GB and a V8 abort, losing every queued
 * message). Now mailboxes count bytes: the server refuses what it cannot
 * queue with RESOURCE_EXHAUSTED (`mailbox_full` or `memory_pressure`), stays
 * up, keeps its peak resident memory under `PEAK_RSS_LIMIT`, and every
 * message it accepted is answered: by the agent, or by a FIPA `failure`.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createGrpcClient, RemoteError, type GrpcClient } from '../../src/api/grpc/grpc-client.js';
import { burner, compile } from '../agents/agent-wat.js';
import { logged, request, startSvc } from './svc-process.js';

/** The figure docs/operations.md gives for this attack with the default limits. */
const PEAK_RSS_LIMIT = 1024 * 1024 * 1024;
const CONTENT = 'x'.repeat(1_000_000);
/** Sends in flight at once, per agent: enough to keep every mailbox at its limit. */
const CONCURRENCY = 4;
/** Gigabytes through loopback gRPC take minutes on a busy 2-core machine. */
const KILL_AFTER_MS = 540_000;
const TIMEOUT = { timeout: 600_000 };

/** Peak resident memory of a process (VmHWM), in bytes. */
function peakRss(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmHWM:'));
  assert.ok(line !== undefined, 'VmHWM in /proc');
  return Number(/(\d+)/.exec(line)![1]) * 1024;
}

interface Tally {
  accepted: number;
  refused: Record<string, number>;
}

async function flood(client: GrpcClient, receiver: string, count: number, tally: Tally): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < count) {
      next += 1;
      try {
        await client.send({ receiver, message_type: 'request', content: CONTENT });
        tally.accepted += 1;
      } catch (error) {
        assert.ok(error instanceof RemoteError, String(error));
        assert.equal(error.code, 'RESOURCE_EXHAUSTED', error.message);
        const reason = String(error.body.metadata?.['reason']);
        tally.refused[reason] = (tally.refused[reason] ?? 0) + 1;
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, lane));
}

async function attack(agents: number, messages: number, env: Record<string, string>): Promise<{ tally: Tally; peak: number }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-memory-attack-'));
  const svc = startSvc(dataDir, [], { SVC_SERVER_RATE_LIMIT_ENABLED: 'false', ...env }, KILL_AFTER_MS);
  let client: GrpcClient | undefined;
  try {
    const api = await svc.api;
    const listening = await logged(svc, 'the listening line', (l) => l.msg === 'listening');
    client = createGrpcClient(String(listening.grpc));
    const spinner = await compile(burner(20_000_000));
    const ids: string[] = [];
    for (let i = 0; i < agents; i++) ids.push((await client.deploy({ name: `spinner-${i}`, wasm_module: spinner })).agent_id);
    const replies = { inform: 0, failure: 0 };
    const stream = client.subscribe({ message_types: ['inform', 'failure'] });
    stream.on('data', (m: { receiver: string; message_type: string }) => {
      if (m.receiver.startsWith('client:')) replies[m.message_type as 'inform' | 'failure'] += 1;
    });
    stream.on('error', () => undefined);
    const tally: Tally = { accepted: 0, refused: {} };
    await Promise.all(ids.map((id) => flood(client!, id, messages, tally)));
    assert.equal(tally.accepted + Object.values(tally.refused).reduce((a, b) => a + b, 0), agents * messages);
    assert.ok(tally.accepted > 0, 'some messages were accepted');
    assert.ok(Object.keys(tally.refused).every((r) => r === 'mailbox_full' || r === 'memory_pressure'), JSON.stringify(tally.refused));
    // Every accepted message is answered: the spinner's reply, or the platform's failure.
    const deadline = Date.now() + 300_000;
    while (replies.inform + replies.failure < tally.accepted && Date.now() < deadline) {
      assert.equal((await request(`${api}/health`)).status, 200, 'the server is up');
    }
    assert.equal(replies.inform + replies.failure, tally.accepted, JSON.stringify({ replies, tally }));
    stream.cancel();
    // The server's own process: with a heap limit, `svc start` runs it as a child, which logged `listening`.
    const peak = peakRss(Number(listening.pid));
    return { tally, peak };
  } finally {
    client?.close();
    const run = await svc.stop();
    assert.equal(run.code, 0, run.stderr);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

describe('the memory attack of issue 41', TIMEOUT, () => {
  it('5 spinning agents × 1,000 messages of 1 MiB over gRPC: refused past the limits, the server up, peak RSS under 1 GiB, every accepted message answered', async (t) => {
    const { tally, peak } = await attack(5, 1_000, {});
    assert.ok(peak < PEAK_RSS_LIMIT, `peak RSS ${Math.round(peak / 1048576)} MiB`);
    t.diagnostic(`5 x 1000 x 1 MiB: accepted ${tally.accepted}, refused ${JSON.stringify(tally.refused)}, peak RSS ${Math.round(peak / 1048576)} MiB`);
  });

  it('a larger variant: 20 spinning agents under a 256 MiB heap limit, more mailboxes than max_queued_bytes holds: refused, up, every accepted message answered', async (t) => {
    const { tally, peak } = await attack(20, 250, { SVC_RUNTIME_HEAP_LIMIT: '256MiB' });
    assert.ok(peak < PEAK_RSS_LIMIT, `peak RSS ${Math.round(peak / 1048576)} MiB`);
    t.diagnostic(`20 x 250 x 1 MiB, heap limit 256 MiB: accepted ${tally.accepted}, refused ${JSON.stringify(tally.refused)}, peak RSS ${Math.round(peak / 1048576)} MiB`);
  });
});
