/**
 * Undeploy as issue 41 asks it to hold: one of several undeploys of an agent
 * answers OK and the others NOT_FOUND; an undeploy whose delete fails leaves
 * the agent running and listed; and the record is gone before the agent
 * stops, so an acknowledged undeploy cannot come back after a crash.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { createSimulatedClock } from '../../supervisors/index.js';
import { isSvcError } from '../../src/errors/svc-error.js';
import { burner, compile } from './agent-wat.js';
import { CLIENT, TEST_TIMEOUT_MS, ask, ctx, deploy, example, messages, startTestServer, transitions, until, waitForState } from './agent-fixtures.js';

const isCode = (code: string, reason?: string) => (error: unknown) =>
  isSvcError(error) && error.code === code && (reason === undefined || error.metadata['reason'] === reason);

describe('undeploy', { timeout: TEST_TIMEOUT_MS }, () => {
  it('regression (issue 41): of 15 concurrent undeploys of one agent, one answers OK and 14 NOT_FOUND', async () => {
    const t = await startTestServer({ clock: createSimulatedClock() });
    try {
      const id = await deploy(t, example('echo'), 'echo');
      const outcomes = await Promise.allSettled(Array.from({ length: 15 }, () => t.service.undeploy(id, ctx)));
      assert.equal(outcomes.filter((o) => o.status === 'fulfilled').length, 1);
      for (const o of outcomes) if (o.status === 'rejected') assert.ok(isCode('NOT_FOUND')(o.reason), String(o.reason));
      await assert.rejects(t.service.get(id, ctx), isCode('NOT_FOUND'));
    } finally {
      await t.stop();
    }
  });

  it('regression (issue 41): an undeploy whose delete fails leaves the agent running, listed and answering; it stays after a restart', async () => {
    const t = await startTestServer({ clock: createSimulatedClock() });
    let restarted: Awaited<ReturnType<typeof startTestServer>> | undefined;
    try {
      const events = t.events();
      const id = await deploy(t, example('echo'), 'echo');
      // A second connection makes the store refuse the delete, as a failing disk would: the write fails, nothing else.
      const other = new Database(t.host().store.path);
      try {
        other.exec("CREATE TRIGGER refuse_delete BEFORE DELETE ON agents BEGIN SELECT RAISE(ABORT, 'the disk said no'); END");
        await assert.rejects(t.service.undeploy(id, ctx), isSvcError);
      } finally {
        other.close();
      }
      assert.equal((await t.service.get(id, ctx)).state, 'running');
      assert.deepEqual((await t.service.list({}, ctx)).agents.map((a) => a.agent_id), [id]);
      assert.equal((await ask(t, events, id, 'still here')).content, 'still here');
      assert.deepEqual(transitions(events, id).filter((e) => e.to === 'stopping'), [], 'never stopped');
      await t.stop(true);
      restarted = await startTestServer({ clock: createSimulatedClock(), dir: t.dir });
      assert.equal((await waitForState(restarted, id, 'running')).name, 'echo', 'the unacknowledged undeploy left it deployed');
    } finally {
      await restarted?.stop();
      await t.stop();
    }
  });

  it('regression (issue 41): reads that fall back to the store answer a damaged record with 503 storage_corrupt, not 500', async () => {
    const t = await startTestServer({ clock: createSimulatedClock() });
    try {
      const id = await deploy(t, example('echo'), 'echo');
      // A record this node does not run, damaged on disk: get, history and a stream filter read it from the store.
      const other = new Database(t.host().store.path);
      try {
        other
          .prepare(
            `INSERT INTO agents (agent_id, name, capabilities, resources, module_sha256, desired_state, restart_count, node_id, created_at, updated_at)
             SELECT 'damaged', 'damaged', capabilities, '{}', module_sha256, 'stopped', 0, node_id, created_at, updated_at FROM agents WHERE agent_id = ?`,
          )
          .run(id);
      } finally {
        other.close();
      }
      const corrupt = isCode('UNAVAILABLE', 'storage_corrupt');
      await assert.rejects(t.service.get('damaged', ctx), corrupt);
      await assert.rejects(t.service.recentMessages('damaged', ctx), corrupt);
      assert.throws(() => t.service.subscribe({ agent_id: 'damaged' }, () => undefined, ctx), corrupt);
      assert.equal((await t.service.get(id, ctx)).state, 'running', 'the running agent is read from memory');
    } finally {
      await t.stop();
    }
  });

  it('the record is deleted, durably, before the agent stops: a crash while it drains cannot bring it back', async () => {
    const t = await startTestServer({ clock: createSimulatedClock(), overrides: { 'runtime.fuel_per_execution': 10_000_000_000 } });
    try {
      const events = t.events();
      const id = await deploy(t, await compile(burner(200_000_000)), 'slow');
      const { message_id } = await t.service.send({ receiver: id, message_type: 'request', content: 'go' }, ctx);
      await waitForState(t, id, 'executing');
      const undeploying = t.service.undeploy(id, ctx);
      await until(() => transitions(events, id).some((e) => e.to === 'stopping'), 'stopping');
      // What another process reading the file sees now, while the agent still drains its execution.
      const reader = new Database(t.host().store.path, { readonly: true });
      try {
        assert.equal(reader.prepare('SELECT count(*) FROM agents WHERE agent_id = ?').pluck().get(id), 0);
      } finally {
        reader.close();
      }
      assert.equal(messages(events, 'delivered').some((m) => m.receiver === CLIENT && m.in_reply_to === message_id), false, 'still executing');
      await undeploying;
      assert.ok(messages(events, 'delivered').some((m) => m.receiver === CLIENT && m.in_reply_to === message_id), 'the execution finished first');
    } finally {
      await t.stop();
    }
  });
});
