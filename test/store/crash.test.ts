/**
 * Durability against a killed process: every deploy the store acknowledged is
 * there after SIGKILL, the failure the durability test inflicts on the
 * whole server.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { afterEach, beforeEach, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { createStore } from '../../src/store/store.js';
import { tempDataDir, type TempDir } from './store-fixtures.js';
import { scriptCommand } from '../helpers/script-command.js';

const WRITER = scriptCommand(import.meta.url, './crash-writer');
/** Far more than get written before the kill, so the kill lands mid-stream; bounded all the same. */
const MAX_AGENTS = 100_000;
const KILL_AFTER_ACKS = 300;
const DEADLINE_MS = 20_000;

let dir: TempDir;
beforeEach(() => {
  dir = tempDataDir();
});
afterEach(() => dir.remove());

interface Run {
  acked: string[];
  signal: NodeJS.Signals | null;
  code: number | null;
}

/** Runs the writer, SIGKILLs it after `KILL_AFTER_ACKS` acks, and returns every ack it got out before dying. */
function writeAndKill(): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...WRITER, dir.path, String(MAX_AGENTS)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const acked: string[] = [];
    let partial = '';
    const deadline = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`writer gave ${acked.length} acks in ${DEADLINE_MS} ms`));
    }, DEADLINE_MS);
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        const match = /^ack (\S+)$/.exec(line);
        if (!match) {
          child.kill('SIGKILL');
          reject(new Error(`unexpected writer output: ${line}`));
          return;
        }
        acked.push(match[1] as string);
      }
      if (acked.length >= KILL_AFTER_ACKS) child.kill('SIGKILL');
    });
    child.on('error', reject);
    // 'close' rather than 'exit': it waits for stdout to drain, so no ack written before death is missed.
    child.on('close', (code, signal) => {
      clearTimeout(deadline);
      resolve({ acked, signal, code });
    });
  });
}

describe('store: crash durability', () => {
  it('keeps every acknowledged agent when the writer is SIGKILLed mid-stream', { timeout: DEADLINE_MS + 10_000 }, async () => {
    const run = await writeAndKill();
    assert.equal(run.signal, 'SIGKILL', `writer exited on its own (code ${run.code}) after ${run.acked.length} acks`);
    assert.ok(run.acked.length >= KILL_AFTER_ACKS);

    const store = createStore({ dataDir: dir.path });
    try {
      for (const agentId of run.acked) {
        const agent = store.getAgent(agentId);
        assert.ok(agent, `acknowledged agent ${agentId} is missing`);
        assert.equal(store.getModule(agent.moduleSha256)?.byteLength, 12 * 1024);
      }
      // The kill may fall between a commit and its ack: at most one agent more than acknowledged.
      const stored = store.countAgents();
      assert.ok(stored >= run.acked.length && stored <= run.acked.length + 1, `${stored} stored, ${run.acked.length} acknowledged`);
    } finally {
      store.close();
    }

    const db = new Database(store.path, { readonly: true });
    try {
      assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
    } finally {
      db.close();
    }
  });
});
