/**
 * The server as a whole (src/server.ts): the supervision tree's order, a
 * graceful stop that drains executions in flight, and a restart restoring the
 * stored agents, including one that can no longer start (kept, failed).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { burner, compile, grower } from '../agents/agent-wat.js';
import { CLIENT, ask, ctx, deliveredTo, deploy, example, startTestServer, transitions, waitForState } from '../agents/agent-fixtures.js';

function tempDir(): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), 'svc-server-'));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

describe('server', () => {
  it('starts the services in order and stops them in reverse, agents first and the store last', async () => {
    const t = await startTestServer();
    await t.stop();
    const changes = t.logs.filter((l) => l.msg === 'service transition').map((l) => `${String(l.service)}:${String(l.to)}`);
    const started = changes.filter((c) => c.endsWith(':running')).map((c) => c.split(':')[0]);
    const stopped = changes.filter((c) => c.endsWith(':stopped')).map((c) => c.split(':')[0]);
    assert.deepEqual(started, ['store', 'pool', 'bus', 'agents']);
    assert.deepEqual(stopped, ['agents', 'bus', 'pool', 'store']);
    assert.ok(t.logs.some((l) => l.msg === 'started') && t.logs.at(-1)?.msg === 'stopped');
  });

  it('is started only once every executor worker has started, so a deploy at once does not spend its startup timeout on them', async () => {
    // A worker thread takes 100-500 ms to boot under tsx; a startup timeout shorter than that failed the first deploy.
    const t = await startTestServer({ overrides: { 'runtime.executor_workers': 2, 'runtime.agent_startup_timeout': '50ms' } });
    try {
      const stats = t.host().pool.stats();
      assert.equal(stats.startedWorkers, stats.workers);
      assert.equal(stats.workers, 2);
      const id = await deploy(t, example('echo'), 'echo-at-once');
      assert.equal((await t.service.get(id, ctx)).state, 'running');
    } finally {
      await t.stop();
    }
  });

  it('a graceful stop lets the execution in flight finish and answer', async () => {
    const t = await startTestServer();
    const events = t.events();
    const id = await deploy(t, await compile(burner(100_000_000)), 'burner');
    const { message_id } = await t.service.send({ receiver: id, message_type: 'request', content: 'go' }, ctx);
    await waitForState(t, id, 'executing');
    await t.stop();
    assert.equal(deliveredTo(events, CLIENT).find((m) => m.in_reply_to === message_id)?.content, 'done');
    assert.deepEqual(transitions(events, id).slice(-2).map((e) => `${e.from}>${e.to}:${e.reason}`), ['running>stopping:shutdown', 'stopping>stopped:shutdown']);
  });

  it('restores every stored agent on start; one that no longer passes admission is kept, failed', async () => {
    const dir = tempDir();
    try {
      const first = await startTestServer({ dir: dir.path });
      let counter: string;
      let echo: string;
      try {
        const events = first.events();
        counter = await deploy(first, example('counter'), 'counter');
        echo = await deploy(first, example('echo'), 'echo');
        assert.equal((await ask(first, events, counter, 'a')).content, '1');
        assert.equal((await ask(first, events, counter, 'b')).content, '2');
      } finally {
        await first.stop();
      }

      const second = await startTestServer({ dir: dir.path });
      try {
        const events = second.events();
        const agents = (await second.service.list({}, ctx)).agents;
        assert.deepEqual(agents.map((a) => [a.name, a.state]), [['counter', 'running'], ['echo', 'running']]);
        assert.equal(second.server.nodeId, first.server.nodeId, 'the node id is kept in the data dir');
        // Linear memory is not persisted: a restored agent starts fresh, as after a restart.
        assert.equal((await ask(second, events, counter, 'c')).content, '1');
        assert.equal((await ask(second, events, echo, 'still')).content, 'still');
      } finally {
        await second.stop();
      }

      // The examples declare a 16-page maximum; with 8 allowed, admission refuses them now.
      const third = await startTestServer({ dir: dir.path, overrides: { 'runtime.max_memory_pages': 8 } });
      try {
        const restored = await third.service.get(counter, ctx);
        assert.equal(restored.state, 'failed');
        assert.equal((await third.service.list({}, ctx)).agents.length, 2);
        const failed = third.logs.find((l) => l.msg === 'agent transition' && l.agent_id === counter && l.to === 'failed');
        assert.match(String(failed?.reason), /^restore_failed: /);
        await third.service.undeploy(counter, ctx);
        assert.equal((await third.service.list({}, ctx)).agents.length, 1);
      } finally {
        await third.stop();
      }
    } finally {
      dir.remove();
    }
  });

  it('a restored agent is held to a lowered max_memory_pages, and lists it as its memory_limit', async () => {
    const PAGE = 65_536;
    const dir = tempDir();
    // With lower_memory_maximum on, admission lowers the module's 64-page maximum to max_memory_pages, and the
    // agent's limit lowers it further. The agent is listed with the limit it runs under, not a stored one above it.
    const lowered = { 'runtime.lower_memory_maximum': 'true' };
    try {
      const first = await startTestServer({ dir: dir.path, overrides: lowered });
      let grows: string;
      let small: string;
      try {
        const module = await compile(grower(1, 64));
        grows = await deploy(first, module, 'grows');
        small = await deploy(first, module, 'small', { memory_limit: 4 * PAGE, cpu_shares: 0 });
        const events = first.events();
        assert.equal((await ask(first, events, grows, 'grow')).content, '64', 'memory_limit 0 is max_memory_pages (1,024): the module maximum bounds it');
        assert.equal((await first.service.get(grows, ctx)).resources.memory_limit, 1024 * PAGE);
      } finally {
        await first.stop();
      }

      const second = await startTestServer({ dir: dir.path, overrides: { ...lowered, 'runtime.max_memory_pages': 8 } });
      try {
        const events = second.events();
        assert.equal((await ask(second, events, grows, 'grow')).content, '8', 'the stored limit of 1,024 pages is above the 8 now allowed');
        assert.equal((await ask(second, events, small, 'grow')).content, '4', 'a stored limit under the new maximum is kept');
        assert.equal((await second.service.get(grows, ctx)).resources.memory_limit, 8 * PAGE);
        assert.equal((await second.service.get(small, ctx)).resources.memory_limit, 4 * PAGE);
        const listed = (await second.service.list({}, ctx)).agents.map((a) => [a.name, a.resources.memory_limit]);
        assert.deepEqual(listed, [['grows', 8 * PAGE], ['small', 4 * PAGE]]);
      } finally {
        await second.stop();
      }

      // The stored request is kept: with the maximum raised again, the agent has its own limit back.
      const third = await startTestServer({ dir: dir.path, overrides: lowered });
      try {
        assert.equal((await ask(third, third.events(), grows, 'grow')).content, '64');
        assert.equal((await third.service.get(grows, ctx)).resources.memory_limit, 1024 * PAGE);
      } finally {
        await third.stop();
      }
    } finally {
      dir.remove();
    }
  });
});
