/**
 * Durability against a killed server: a real child process runs the server
 * and deploys agents, acknowledging each on stdout; the test SIGKILLs it
 * mid-stream, starts the server again on the same data directory, and every
 * acknowledged agent is back, running, and answers.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { CLIENT, ctx, deliveredTo, startTestServer, until } from '../agents/agent-fixtures.js';
import { scriptCommand } from '../helpers/script-command.js';

const DEPLOYER = scriptCommand(import.meta.url, './durable-deployer');
/** Far more than get deployed before the kill, so it lands mid-stream; bounded all the same. */
const MAX_AGENTS = 2_000;
const KILL_AFTER_ACKS = 40;
const DEADLINE_MS = 30_000;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'svc-durability-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

interface Run {
  acked: string[];
  signal: NodeJS.Signals | null;
  code: number | null;
  stderr: string;
}

function deployAndKill(): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...DEPLOYER, dir, String(MAX_AGENTS)], { stdio: ['ignore', 'pipe', 'pipe'] });
    const acked: string[] = [];
    let partial = '';
    let stderr = '';
    const deadline = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`deployer gave ${acked.length} acks in ${DEADLINE_MS} ms: ${stderr}`));
    }, DEADLINE_MS);
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => (stderr += chunk));
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        const match = /^ack (\S+)$/.exec(line);
        if (match === null) {
          child.kill('SIGKILL');
          reject(new Error(`unexpected deployer output: ${line}`));
          return;
        }
        acked.push(match[1]!);
      }
      if (acked.length >= KILL_AFTER_ACKS) child.kill('SIGKILL');
    });
    child.on('error', reject);
    // 'close' waits for stdout to drain, so no ack written before the kill is missed.
    child.on('close', (code, signal) => {
      clearTimeout(deadline);
      resolve({ acked, signal, code, stderr });
    });
  });
}

describe('durability', () => {
  it('every acknowledged deploy survives SIGKILL: back, running and answering after a restart', { timeout: DEADLINE_MS + 30_000 }, async () => {
    const run = await deployAndKill();
    assert.equal(run.signal, 'SIGKILL', `deployer exited on its own (code ${run.code}): ${run.stderr}`);
    assert.ok(run.acked.length >= KILL_AFTER_ACKS);

    const t = await startTestServer({ dir });
    try {
      const events = t.events();
      const listed = new Map<string, string>();
      for (let token = ''; ; ) {
        const page = await t.service.list({ page_size: 1_000, page_token: token }, ctx);
        for (const agent of page.agents) listed.set(agent.agent_id, agent.state);
        token = page.next_page_token;
        if (token === '') break;
      }
      // The kill may fall between a deploy's commit and its ack: at most one agent more than acknowledged.
      assert.ok(listed.size >= run.acked.length && listed.size <= run.acked.length + 1, `${listed.size} listed, ${run.acked.length} acknowledged`);
      for (const id of run.acked) assert.equal(listed.get(id), 'running', `acknowledged agent ${id}`);

      const asked = new Map<string, string>();
      for (const id of run.acked) asked.set((await t.service.send({ receiver: id, message_type: 'request', content: 'count' }, ctx)).message_id, id);
      await until(() => deliveredTo(events, CLIENT).length >= asked.size, 'every agent to answer');
      for (const reply of deliveredTo(events, CLIENT)) {
        assert.equal(asked.get(reply.in_reply_to!), reply.sender);
        assert.equal(reply.content, '1');
      }
    } finally {
      await t.stop();
    }
  });
});
