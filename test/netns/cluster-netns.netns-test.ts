/**
 * The cluster on a real network (issue 43): three `svc start` processes,
 * each in its own network namespace on a bridge (netns-lab.ts), with
 * nftables faults: a non-transitive cut, a one-way cut, 30% loss, each
 * healed. Checks that nobody is declared dead in the non-transitive cut,
 * and the majority rule: after a heal, never two running copies of an
 * agent. Run with `npm run test:cluster-netns` (root, ip, nft, curl);
 * where namespaces cannot be made it says why and skips.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { example } from '../agents/agent-fixtures.js';
import { create, cut, destroy, heal, http, lose, nodeAddress, nodeNamespace, unavailableReason } from './netns-lab.js';

const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
const TSX = import.meta.resolve('tsx');
const NODES = 3;
const SECRET = randomBytes(32).toString('base64');
/** Long enough for several suspicion timeouts at the defaults (1.5 s base, 9 s unconfirmed). */
const FAULT_MS = 15_000;

interface LogLine {
  msg: string;
  [key: string]: unknown;
}

interface Server {
  readonly index: number;
  readonly child: ChildProcess;
  readonly lines: LogLine[];
  stderr: string;
  readonly dir: string;
  id: string;
}

const reason = unavailableReason();
if (reason !== undefined) console.log(`# network-namespace scenarios skipped: ${reason}`);

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function start(index: number, dir: string): Server {
  const address = nodeAddress(index);
  const env = {
    PATH: process.env.PATH ?? '',
    SVC_DATA_DIR: dir,
    SVC_HTTP_ADDR: `${address}:8080`,
    SVC_GRPC_ADDR: `${address}:7000`,
    SVC_METRICS_ADDR: '127.0.0.1:0',
    SVC_RUNTIME_EXECUTOR_WORKERS: '1',
    SVC_CLUSTER_ADDR: `${address}:7946`,
    SVC_CLUSTER_SECRET: SECRET,
    // The API listens on the namespace's address, reached only from this test.
    SVC_SECURITY_ALLOW_UNAUTHENTICATED: 'true',
    SVC_CLUSTER_SEEDS: index === 1 ? '' : `${nodeAddress(1)}:7946`,
  };
  const child = spawn('ip', ['netns', 'exec', nodeNamespace(index), process.execPath, '--import', TSX, MAIN, 'start'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const server: Server = { index, child, lines: [], stderr: '', dir, id: '' };
  child.stderr?.on('data', (chunk: Buffer) => (server.stderr += chunk.toString()));
  let partial = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    const text = partial + chunk.toString();
    const complete = text.split('\n');
    partial = complete.pop() ?? '';
    for (const line of complete) if (line.startsWith('{')) server.lines.push(JSON.parse(line) as LogLine);
  });
  return server;
}

/** Polls `check` every 100 ms for at most `ms`; fails naming `what`. */
async function waitFor(what: string, ms: number, check: () => boolean | Promise<boolean>): Promise<void> {
  for (let waited = 0; waited < ms; waited += 100) {
    if (await check()) return;
    await pause(100);
  }
  assert.fail(`not within ${ms} ms: ${what}`);
}

type Listed = { agent_id: string; node_id: string; state: string };

/** The nodes that run the agent now, each by its own account. */
async function running(servers: readonly Server[], agentId: string): Promise<string[]> {
  const hosts: string[] = [];
  for (const server of servers) {
    const answer = await http(server.index, 'GET', '/api/v1/agents').catch(() => undefined);
    const own = ((answer?.body.agents ?? []) as Listed[]).find((a) => a.agent_id === agentId && a.node_id === server.id);
    if (own !== undefined && own.state !== 'stopped' && own.state !== 'failed') hosts.push(server.id);
  }
  return hosts;
}

/** Watches for `ms` that at most one node runs the agent; resolves with the hosts seen last. */
async function neverTwo(servers: readonly Server[], agentId: string, ms: number): Promise<string[]> {
  let last: string[] = [];
  for (let waited = 0; waited < ms; waited += 250) {
    last = await running(servers, agentId);
    assert.ok(last.length <= 1, `two running copies of ${agentId}: ${last.join(', ')}`);
    await pause(250);
  }
  return last;
}

const deaths = (servers: readonly Server[]) => servers.flatMap((s) => s.lines.filter((l) => l.msg === 'cluster member changed' && l.to === 'dead'));

describe('three nodes in network namespaces, with real faults', { skip: reason }, () => {
  const servers: Server[] = [];

  before(async () => {
    create(NODES);
    for (let i = 1; i <= NODES; i++) {
      const server = start(i, mkdtempSync(join(tmpdir(), `svc-netns-${i}-`)));
      servers.push(server);
      await waitFor(`node ${i} started`, 120_000, () => {
        assert.equal(server.child.exitCode, null, `node ${i} exited: ${server.stderr}`);
        return server.lines.some((l) => l.msg === 'started');
      });
      server.id = String(server.lines.find((l) => l.msg === 'cluster joined')?.node_id);
    }
    await waitFor('three alive members everywhere', 30_000, async () => {
      for (const server of servers) {
        const answer = await http(server.index, 'GET', '/api/v1/cluster/members');
        if (((answer.body.members ?? []) as Array<{ state: string }>).filter((m) => m.state === 'alive').length !== NODES) return false;
      }
      return true;
    });
  });

  after(async () => {
    try {
      await Promise.all(
        servers.map(
          (s) =>
            new Promise<void>((resolve) => {
              if (s.child.exitCode !== null) return resolve();
              s.child.once('close', () => resolve());
              s.child.kill('SIGKILL');
            }),
        ),
      );
      for (const s of servers) rmSync(s.dir, { recursive: true, force: true });
    } finally {
      destroy();
    }
  });

  it('a non-transitive cut (1 and 3 cannot talk, both reach 2) declares nobody dead', async () => {
    const before = deaths(servers).length;
    cut(1, 3);
    cut(3, 1);
    await pause(FAULT_MS);
    heal();
    assert.equal(deaths(servers).length, before, JSON.stringify(deaths(servers)));
  });

  it('a one-way cut (3 cannot send): the majority takes its agent over, 3 stops it, and after the heal one copy runs', async () => {
    const deployed = await http(3, 'POST', '/api/v1/agents', { name: 'netns-echo', wasm_module: Buffer.from(example('echo')).toString('base64') });
    assert.equal(deployed.status, 201, JSON.stringify(deployed.body));
    const agentId = String(deployed.body.agent_id);
    await waitFor('the agent known on 1', 10_000, async () => (await http(1, 'GET', `/api/v1/agents/${agentId}`)).status === 200);
    cut(3, 1);
    cut(3, 2);
    await waitFor('the agent running on node 1 or 2', 30_000, async () => (await running(servers.slice(0, 2), agentId)).length === 1);
    await waitFor('node 3 stopped its agents as a minority', 30_000, () => servers[2]!.lines.some((l) => l.msg === 'this node sees less than half of the cluster: stopping its agents'));
    heal();
    const hosts = await neverTwo(servers, agentId, FAULT_MS);
    assert.equal(hosts.length, 1, 'one copy runs after the heal');
    assert.notEqual(hosts[0], servers[2]!.id);
  });

  it('30% loss on every link, then a heal: never two running copies of an agent', async () => {
    const deployed = await http(2, 'POST', '/api/v1/agents', { name: 'netns-lossy', wasm_module: Buffer.from(example('echo')).toString('base64') });
    assert.equal(deployed.status, 201, JSON.stringify(deployed.body));
    const agentId = String(deployed.body.agent_id);
    lose(30);
    await neverTwo(servers, agentId, FAULT_MS);
    heal();
    const hosts = await neverTwo(servers, agentId, FAULT_MS);
    assert.equal(hosts.length, 1);
  });
});
