/**
 * One server per data directory, and no silent loss (issue 41, item 4),
 * against real `svc start` processes: a second server on the same directory
 * exits at once naming the holder's pid, and starts once the holder was
 * SIGKILLed; a store truncated to zero bytes, one with a corrupt index, and
 * one whose write-ahead log lost a frame after a SIGKILL are each refused at
 * start with a message saying what was found, and `svc start --recover`
 * accepts (or repairs) them. Stores are seeded in-process where the test is
 * about what a later start finds: each `svc` process costs seconds of CPU.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { EXIT } from '../../src/cli/exit-codes.js';
import { readIdentity } from '../../src/store/data-dir-identity.js';
import { damageIndex, damageWalFrame, walFrames } from '../store/damage.js';
import { deployExample, request, seedAgents, startSvc, type SvcProcess } from './svc-process.js';
import { scriptCommand } from '../helpers/script-command.js';

/** A bound on a hang; the processes alone take seconds each, many more on a busy machine. */
const TIMEOUT = { timeout: 300_000 };
const DEPLOYER = scriptCommand(import.meta.url, './durable-deployer');

let dir: string;
let started: SvcProcess[];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'svc-data-dir-'));
  started = [];
});
afterEach(async () => {
  await Promise.all(started.filter((s) => s.running.child.exitCode === null && s.running.child.signalCode === null).map((s) => s.kill()));
  rmSync(dir, { recursive: true, force: true });
});

function svc(args: readonly string[] = []): SvcProcess {
  const process = startSvc(dir, args);
  started.push(process);
  return process;
}

async function agentNames(api: string): Promise<string[]> {
  const listed = await request(`${api}/api/v1/agents?page_size=1000`);
  return (listed.body.agents as Array<{ name: string }>).map((a) => a.name);
}

/** Starts that must fail: exit code 1 and the message on stderr. */
async function refusedStart(args: readonly string[] = []): Promise<string> {
  const run = await svc(args).running.done;
  assert.equal(run.code, EXIT.failure, `expected a refused start: ${run.stderr}`);
  return run.stderr;
}

describe('the data directory lock', TIMEOUT, () => {
  it('a second server exits at once naming the holder; once the holder is SIGKILLed, the next one starts and has its agents', async () => {
    const holder = svc();
    const api = await holder.api;
    assert.equal((await deployExample(api, 'held')).status, 201);

    const stderr = await refusedStart();
    assert.match(stderr, new RegExp(`^svc: the data directory ${dir} is in use by another svc server \\(pid ${holder.pid}\\)`));
    assert.equal((await request(`${api}/ready`)).status, 200, 'the holder is untouched');

    assert.equal((await holder.kill()).code, null);
    const next = svc();
    assert.deepEqual(await agentNames(await next.api), ['held']);
  });
});

describe('a store that lost what the directory recorded', TIMEOUT, () => {
  it('svc.db truncated to zero bytes: refused, naming what was found; --recover starts with an empty store and the same node id', async () => {
    seedAgents(dir, ['a', 'b', 'c']);
    const before = readIdentity(dir);
    assert.equal(before.state, 'present');
    truncateSync(join(dir, 'svc.db'), 0);
    const stderr = await refusedStart();
    assert.match(stderr, /^svc: svc\.db is empty \(0 bytes\), but this data directory recorded 3 agents \(3 deploys and 0 undeploys acknowledged\) on node \S+\./);
    assert.match(stderr, /`svc start --recover`/);

    const recovered = svc(['--recover']);
    assert.deepEqual(await agentNames(await recovered.api), []);
    assert.ok(recovered.logs().some((l) => l.msg === 'recover: accepted the store as found' && String(l.finding).startsWith('svc.db is empty')));
    const nodeId = recovered.logs().find((l) => l.msg === 'started')?.node_id;
    assert.equal(nodeId, before.state === 'present' ? before.identity.nodeId : undefined, 'the node keeps its id');
  });

  it('a write-ahead-log frame damaged after SIGKILL: refused naming the missing deploys, not started without them', async () => {
    const acked = await deployAndKill(40);
    const wal = join(dir, 'svc.db-wal');
    damageWalFrame(wal, Math.floor(walFrames(wal).frames / 2));
    const stderr = await refusedStart();
    assert.match(stderr, new RegExp(`this data directory recorded (${acked}|${acked + 1}) agents .*: \\d+ deploys acknowledged earlier are missing`));
    // What --recover then accepts is the store test's (test/store/open-store.test.ts).
  });
});

describe('a damaged store', TIMEOUT, () => {
  it('a corrupt index is found at start by quick_check; --recover rebuilds the store and every agent runs', async () => {
    seedAgents(dir, ['x', 'y', 'z']);
    damageIndex(join(dir, 'svc.db'), 'agents_by_created');
    const stderr = await refusedStart();
    assert.match(stderr, /^svc: svc\.db failed its integrity check \(PRAGMA quick_check: .+\)\. The server refuses to start on a damaged store: start once with `svc start --recover`/);

    const recovered = svc(['--recover']);
    const api = await recovered.api;
    const listed = await request(`${api}/api/v1/agents`);
    assert.deepEqual((listed.body.agents as Array<{ name: string; state: string }>).map((a) => [a.name, a.state]), [['x', 'running'], ['y', 'running'], ['z', 'running']]);
    assert.equal((await deployExample(api, 'after-repair')).status, 201);
  });
});

/** Deploys up to `count` agents in a child process, SIGKILLs it after the last ack, and answers how many were acknowledged. */
function deployAndKill(count: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...DEPLOYER, dir, String(count)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let acked = 0;
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.on('data', (chunk: Buffer) => {
      acked += chunk.toString().split('\n').filter((line) => line.startsWith('ack ')).length;
      if (acked >= count) child.kill('SIGKILL');
    });
    child.on('error', reject);
    child.on('close', (_code, signal) => (signal === 'SIGKILL' ? resolve(acked) : reject(new Error(`the deployer exited on its own: ${stderr}`))));
  });
}
