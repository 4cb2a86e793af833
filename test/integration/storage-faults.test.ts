/**
 * Storage faults seen from outside (issue 41, item 3), against a real `svc
 * start` process: on a real full filesystem (a tmpfs the test mounts) and on
 * a store file even root cannot write, every write answers 503 UNAVAILABLE
 * with reason `storage_full` / `storage_readonly`, the cause is in the log,
 * /ready is 503 with the same reason while /health stays 200, reads and the
 * running agents keep working, and all of it recovers once the storage can
 * write again.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { mountTmpfs, setImmutable } from '../helpers/tmpfs.js';
import { deployExample, logged, request, seedAgents, startSvc, until, type Answer, type SvcProcess } from './svc-process.js';

/** A bound on a hang; the processes alone take seconds each, many more on a busy machine. */
const TIMEOUT = { timeout: 300_000 };

function assertStorageFault(answer: Answer, reason: string): void {
  assert.equal(answer.status, 503, JSON.stringify(answer.body));
  assert.equal(answer.body.code, 'UNAVAILABLE');
  assert.equal(answer.body.metadata?.reason, reason);
  assert.doesNotMatch(answer.body.message ?? '', /SQLITE|svc\.db|\//, 'the client is told the kind of fault, not paths or SQLite codes');
}

const ready = (api: string) => () => request(`${api}/ready`);

async function send(api: string, agentId: string): Promise<Answer> {
  return request(`${api}/api/v1/agents/${agentId}/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ message_type: 'request', content: 'still here' }),
  });
}

describe('a full disk', TIMEOUT, () => {
  it('deploys and undeploys answer 503 storage_full, /ready 503 until space is freed, then everything works again', async (t) => {
    const fs = mountTmpfs(16 * 1024 * 1024);
    if ('skip' in fs) return t.skip(fs.skip);
    let svc: SvcProcess | undefined;
    try {
      svc = startSvc(fs.path);
      const api = await svc.api;
      const first = await deployExample(api, 'before-full');
      assert.equal(first.status, 201, JSON.stringify(first.body));
      const agentId = String(first.body.agent_id);
      // Undeployed while full; what becomes of an agent whose undeploy failed is the agent host's rule, not checked here.
      const victim = String((await deployExample(api, 'undeployed-while-full')).body.agent_id);

      const filler = fs.fill();
      assertStorageFault(await deployExample(api, 'while-full'), 'storage_full');
      assertStorageFault(await request(`${api}/api/v1/agents/${victim}`, { method: 'DELETE' }), 'storage_full');
      const cause = await logged(svc, 'the storage fault with its cause', (l) => l.msg === 'the store cannot write');
      assert.equal(cause.reason, 'storage_full');
      assert.equal((cause.err as { code?: string }).code, 'SQLITE_FULL');

      assertStorageFault(await request(`${api}/ready`), 'storage_full');
      assert.equal((await request(`${api}/health`)).status, 200);
      const listed = await request(`${api}/api/v1/agents`);
      const names = (listed.body.agents as Array<{ name: string; state: string }>).map((a) => a.name);
      assert.deepEqual(names, ['before-full', 'undeployed-while-full'], 'the failed deploy left nothing; the failed undeploy kept its record');
      assert.equal((await request(`${api}/api/v1/agents/${agentId}`)).body.state, 'running');
      assert.equal((await send(api, agentId)).status, 202, 'the agent that was running still takes messages');

      rmSync(filler);
      await until('/ready 200 once space is freed', ready(api), (a) => a.status === 200);
      assert.equal((await deployExample(api, 'after-full')).status, 201);
      assert.equal((await request(`${api}/api/v1/agents/${agentId}`, { method: 'DELETE' })).status, 200);
      assert.ok(svc.logs().some((l) => l.msg === 'the store can write again'));
      assert.equal((await svc.stop()).code, 0);
    } finally {
      if (svc?.running.child.exitCode === null) await svc.kill();
      fs.unmount();
    }
  });
});

describe('a read-only store', TIMEOUT, () => {
  it('starts serving reads with /ready 503 storage_readonly; writes are refused; all recovers once the file is writable', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-readonly-'));
    const dbPath = join(dir, 'svc.db');
    let svc: SvcProcess | undefined;
    try {
      seedAgents(dir, ['kept']);
      const refused = setImmutable(dbPath, true);
      if (refused !== undefined) return t.skip(refused);
      svc = startSvc(dir);
      const api = await svc.api;
      assertStorageFault(await until('/ready to say why', ready(api), (a) => a.status === 503 && a.body.metadata?.reason !== 'starting'), 'storage_readonly');
      const listed = await request(`${api}/api/v1/agents`);
      assert.deepEqual((listed.body.agents as Array<{ name: string; state: string }>).map((a) => [a.name, a.state]), [['kept', 'running']]);
      assertStorageFault(await deployExample(api, 'refused'), 'storage_readonly');
      const cause = await logged(svc, 'the storage fault with its cause', (l) => l.msg === 'the store cannot write');
      assert.equal((cause.err as { code?: string }).code, 'SQLITE_READONLY');

      setImmutable(dbPath, false);
      await until('/ready 200 once the file is writable', ready(api), (a) => a.status === 200);
      assert.equal((await deployExample(api, 'accepted')).status, 201);
      assert.equal((await svc.stop()).code, 0);
    } finally {
      setImmutable(dbPath, false);
      if (svc?.running.child.exitCode === null) await svc.kill();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
