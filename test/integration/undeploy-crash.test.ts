/**
 * An undeploy killed part-way (issue 41): a real child process undeploys an
 * agent that is draining a long execution, and the test SIGKILLs it while
 * the agent is stopping. The undeploy deleted the record before the stop
 * began, so the agent does not come back when the server starts again on
 * the same data directory; the other agent does.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createSimulatedClock } from '../../supervisors/index.js';
import { isSvcError } from '../../src/errors/svc-error.js';
import { TEST_TIMEOUT_MS, ctx, startTestServer, waitForState } from '../agents/agent-fixtures.js';
import { scriptCommand } from '../helpers/script-command.js';

const UNDEPLOYER = scriptCommand(import.meta.url, './stopping-undeployer');

/** Runs the undeployer until it says the agent is stopping, then kills it; the ids it deployed. */
function undeployAndKill(dir: string): Promise<{ busy: string; idle: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...UNDEPLOYER, dir], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let stderr = '';
    let ids: { busy: string; idle: string } | undefined;
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => (stderr += chunk));
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      out += chunk;
      const deployed = /^deployed (\S+) (\S+)$/m.exec(out);
      if (deployed !== null) ids = { busy: deployed[1]!, idle: deployed[2]! };
      if (ids !== undefined && out.includes(`stopping ${ids.busy}\n`)) child.kill('SIGKILL');
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (signal === 'SIGKILL' && ids !== undefined) resolve(ids);
      else reject(new Error(`the undeployer ended with ${signal ?? code} before it was killed: ${out}${stderr}`));
    });
  });
}

describe('undeploy killed part-way', { timeout: TEST_TIMEOUT_MS }, () => {
  it('regression (issue 41): an agent killed while its undeploy drains it does not come back', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-undeploy-crash-'));
    try {
      const { busy, idle } = await undeployAndKill(dir);
      const t = await startTestServer({ dir, clock: createSimulatedClock() });
      try {
        await waitForState(t, idle, 'running');
        await assert.rejects(t.service.get(busy, ctx), (error) => isSvcError(error) && error.code === 'NOT_FOUND');
        assert.deepEqual((await t.service.list({}, ctx)).agents.map((a) => a.agent_id), [idle]);
      } finally {
        await t.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
