/**
 * Supervision of real agents (real workers, real WASM) on a simulated clock:
 * a crash restarts the agent with fresh state after its backoff; an agent
 * that crashes too often goes `failed` alone while the others keep running.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createSimulatedClock } from '../../supervisors/index.js';
import { isSvcError } from '../../src/errors/svc-error.js';
import { CRASHABLE_COUNTER, compile } from './agent-wat.js';
import { TEST_TIMEOUT_MS, ask, ctx, deploy, example, messages, startTestServer, transitions, until, waitForState } from './agent-fixtures.js';

describe('agent supervision', { timeout: TEST_TIMEOUT_MS }, () => {
  it('restarts a crashed agent after its backoff, with fresh state, and keeps its mail for the new start', async () => {
    const clock = createSimulatedClock();
    const t = await startTestServer({ clock });
    try {
      const events = t.events();
      const id = await deploy(t, await compile(CRASHABLE_COUNTER), 'counter');
      assert.equal((await ask(t, events, id, 'one')).content, '1');
      assert.equal((await ask(t, events, id, 'two')).content, '2');

      const failure = await ask(t, events, id, 'boom!');
      assert.equal(failure.message_type, 'failure');
      assert.equal(failure.sender, 'platform');
      assert.equal(failure.metadata['failure_reason'], 'execution_crashed');
      await waitForState(t, id, 'restarting');
      const crash = transitions(events, id).at(-1)!;
      assert.equal(crash.from, 'running');
      assert.match(crash.reason, /^trap: /);

      // Sent while restarting: it waits in the mailbox for the next start.
      const { message_id } = await t.service.send({ receiver: id, message_type: 'request', content: 'three' }, ctx);
      await clock.advance(99);
      assert.equal(t.host().get(id)!.state, 'restarting', 'the default backoff is 100 ms');
      await clock.advance(1);
      await waitForState(t, id, 'running');
      const reply = await until(() => messages(events, 'delivered').find((m) => m.in_reply_to === message_id), 'the reply after the restart');
      assert.equal(reply.content, '1', 'a restart starts from a fresh instance');

      const agent = await t.service.get(id, ctx);
      assert.equal(agent.restart_count, 1);
      assert.deepEqual(
        transitions(events, id).map((e) => `${e.from}>${e.to}`),
        ['null>starting', 'starting>running', 'running>restarting', 'restarting>starting', 'starting>running'],
      );
      const logged = t.logs.filter((l) => l.msg === 'agent transition' && l.agent_id === id).map((l) => [l.from, l.to, l.reason]);
      assert.deepEqual(logged[0], [null, 'starting', 'deploy']);
      assert.ok(logged.some(([from, to, reason]) => from === 'running' && to === 'restarting' && /^trap/.test(String(reason))));
      assert.equal(t.host().store.getAgent(id)?.restartCount, 1, 'the restart count is stored');
    } finally {
      await t.stop();
    }
  });

  it('an agent over its restart intensity goes failed alone: listed, refusing messages, the others unaffected', async () => {
    const clock = createSimulatedClock();
    const t = await startTestServer({ clock, overrides: { 'runtime.restart_max_restarts': 2 } });
    try {
      const events = t.events();
      const crasher = await deploy(t, await compile(CRASHABLE_COUNTER), 'crasher');
      const echo = await deploy(t, example('echo'), 'echo');
      // Four messages that crash it; the last one is still queued when it gives up.
      const sent = [];
      for (let i = 0; i < 4; i++) sent.push((await t.service.send({ receiver: crasher, message_type: 'request', content: `boom ${i}!` }, ctx)).message_id);
      // Counted by transitions, not polled states: a restarted agent takes its next message and crashes at once.
      const state = () => t.host().get(crasher)!.state;
      const restarts = () => transitions(events, crasher).filter((e) => e.to === 'restarting').length;
      for (let seen = 0; seen < 10; seen++) {
        await until(() => restarts() > seen || state() === 'failed', 'the next crash');
        if (state() === 'failed') break;
        await clock.advance(1_000);
      }
      const failed = await t.service.get(crasher, ctx);
      assert.equal(failed.state, 'failed');
      assert.equal(failed.restart_count, 2);
      assert.match(transitions(events, crasher).at(-1)!.reason, /^reached_max_restart_intensity: trap/);

      const failures = messages(events, 'platform').filter((m) => m.receiver === 'client:tester');
      assert.deepEqual(
        sent.map((id) => failures.find((f) => f.in_reply_to === id)?.metadata['failure_reason']),
        ['execution_crashed', 'execution_crashed', 'execution_crashed', 'agent_failed'],
      );
      await assert.rejects(
        t.service.send({ receiver: crasher, message_type: 'request', content: 'hello' }, ctx),
        (error) => isSvcError(error) && error.code === 'UNAVAILABLE' && error.metadata['reason'] === 'agent_failed',
      );
      assert.ok((await t.service.list({}, ctx)).agents.some((a) => a.agent_id === crasher && a.state === 'failed'), 'still listed');

      assert.equal((await ask(t, events, echo, 'still here')).content, 'still here');
      assert.equal((await t.service.get(echo, ctx)).restart_count, 0);
      await clock.advance(120_000);
      assert.equal(t.host().get(crasher)!.state, 'failed', 'never restarted again');
      await t.service.undeploy(crasher, ctx);
      await assert.rejects(t.service.get(crasher, ctx), (error) => isSvcError(error) && error.code === 'NOT_FOUND');
    } finally {
      await t.stop();
    }
  });
});
