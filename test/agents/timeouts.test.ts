/**
 * The agent timeouts: startup (`_start` never returns), execution (a spinner
 * stopped by the pool's watchdog, its neighbours restarted), idle (hibernate,
 * then wake with state intact), shutdown (an in-flight execution finishes, or
 * is cut at `agent_shutdown_timeout`). All of them, the watchdog's included,
 * run on a simulated clock; fuel so large that it never runs out leaves the
 * clock the only way a spin ends.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createSimulatedClock } from '../../supervisors/index.js';
import { isSvcError } from '../../src/errors/svc-error.js';
import { CRASHABLE_COUNTER, START_NEVER_RETURNS, START_SECTION_SPINS, burner, compile } from './agent-wat.js';
import { CLIENT, TEST_TIMEOUT_MS, ask, ctx, deploy, driveUntil, example, messages, startTestServer, transitions, until, waitForState } from './agent-fixtures.js';

/** Fuel no spin of a test runs out of: about a day of execution. */
const ENDLESS_FUEL = 1e15;

describe('agent timeouts', { timeout: TEST_TIMEOUT_MS }, () => {
  it('startup: a _start that never returns fails the deploy with DEADLINE_EXCEEDED and leaves nothing deployed', async () => {
    const clock = createSimulatedClock();
    const t = await startTestServer({ clock, overrides: { 'runtime.agent_startup_timeout': '2s', 'runtime.fuel_per_execution': ENDLESS_FUEL } });
    try {
      const events = t.events();
      // Caught at once: the rejection happens while the clock advances, before `assert.rejects` could attach.
      const deploying = deploy(t, await compile(START_NEVER_RETURNS), 'never-starts').catch((error: unknown) => error);
      // Until the deploy is registered its events wait (lifecycle-events.ts): the log shows the start first.
      const logged = (agentId?: string) => t.logs.filter((l) => l.msg === 'agent transition' && (agentId === undefined || l.agent_id === agentId));
      const starting = await until(() => logged().find((l) => l.to === 'starting'), 'the start');
      const agentId = String(starting.agent_id);
      await clock.advance(1_999);
      assert.equal(logged(agentId).length, 1, 'still starting');
      assert.equal(t.host().get(agentId), undefined, 'not registered while it starts');
      assert.equal(transitions(events, agentId).length, 0, 'no subscriber has heard of it yet');
      await clock.advance(1);
      const error = await deploying;
      assert.ok(isSvcError(error) && error.code === 'DEADLINE_EXCEEDED' && error.metadata['reason'] === 'start_timeout', String(error));
      assert.equal(t.host().store.countAgents(), 0, 'never stored');
      assert.equal(t.host().size, 0);
      assert.deepEqual((await t.service.list({}, ctx)).agents, []);
      // A failed deploy still publishes what its agent went through.
      assert.deepEqual(transitions(events, agentId).map((e) => `${e.from}>${e.to}:${e.reason}`), ['null>starting:deploy', 'starting>stopped:start_timeout']);
    } finally {
      await t.stop();
    }
  });

  it('startup (issue 41): a start section that spins runs out of fuel and the deploy says so, not trap', async () => {
    const t = await startTestServer({ clock: createSimulatedClock(), overrides: { 'runtime.fuel_per_execution': 50_000_000 } });
    try {
      const error = await deploy(t, await compile(START_SECTION_SPINS), 'spins-at-start').catch((e: unknown) => e);
      assert.ok(isSvcError(error), String(error));
      assert.deepEqual([error.code, error.metadata['reason']], ['INVALID_MODULE', 'fuel_exhausted']);
      assert.equal(t.host().store.countAgents(), 0);
    } finally {
      await t.stop();
    }
  });

  it('execution: the watchdog stops a spinner; it and its worker neighbours restart, the sender gets a failure', async () => {
    const clock = createSimulatedClock();
    const t = await startTestServer({
      clock,
      overrides: { 'runtime.executor_workers': 1, 'runtime.execution_timeout': '300ms', 'runtime.fuel_per_execution': ENDLESS_FUEL },
    });
    try {
      const events = t.events();
      const counter = await deploy(t, await compile(CRASHABLE_COUNTER), 'neighbour');
      const spinner = await deploy(t, example('crasher'), 'spinner');
      assert.equal((await ask(t, events, counter, 'one')).content, '1');
      const { message_id } = await t.service.send({ receiver: spinner, message_type: 'request', content: 'loop' }, ctx);
      const failure = await driveUntil(clock, () => messages(events, 'platform').find((m) => m.in_reply_to === message_id), 'the failure of the spin');
      assert.equal(failure.message_type, 'failure');
      assert.match(String(failure.content), /^execution crashed: timeout/);
      await waitForState(t, spinner, 'restarting');
      await waitForState(t, counter, 'restarting');
      assert.match(transitions(events, spinner).at(-1)!.reason, /^timeout/);
      assert.equal(transitions(events, counter).at(-1)!.reason, 'worker_lost');
      await clock.advance(100);
      await waitForState(t, spinner, 'running');
      await waitForState(t, counter, 'running');
      assert.equal((await ask(t, events, counter, 'two')).content, '1', 'the neighbour lost its state with its worker');
      assert.equal((await ask(t, events, spinner, 'hello')).content, 'ok');
    } finally {
      await t.stop();
    }
  });

  it('idle: an agent hibernates after agent_idle_timeout and the next message wakes it with its state', async () => {
    const clock = createSimulatedClock();
    const t = await startTestServer({ clock, overrides: { 'runtime.agent_idle_timeout': '60s' } });
    try {
      const events = t.events();
      const id = await deploy(t, example('counter'), 'counter');
      assert.equal((await ask(t, events, id, 'a')).content, '1');
      await clock.advance(30_000);
      assert.equal((await ask(t, events, id, 'b')).content, '2');
      // 60 s after deploy, but only 30 s after the last message: the timer re-arms for what is left.
      await clock.advance(30_000);
      assert.equal(t.host().get(id)!.state, 'running');
      await clock.advance(30_000);
      const hibernated = await waitForState(t, id, 'hibernated');
      assert.equal(t.host().pool.stats().instances, 0, 'the instance is released');
      assert.ok(hibernated.memory_bytes > 0, 'the snapshot is accounted');

      assert.equal((await ask(t, events, id, 'c')).content, '3', 'state intact after the wake');
      assert.equal(t.host().get(id)!.state, 'running');
      assert.equal(t.host().pool.stats().instances, 1);
      assert.deepEqual(
        transitions(events, id).slice(-2).map((e) => `${e.from}>${e.to}:${e.reason}`),
        ['running>hibernated:idle', 'hibernated>running:message'],
      );
      assert.equal((await t.service.get(id, ctx)).restart_count, 0, 'hibernation is not a restart');
    } finally {
      await t.stop();
    }
  });

  it('shutdown: an execution in flight finishes before the agent stops', async () => {
    const clock = createSimulatedClock();
    const t = await startTestServer({ clock });
    try {
      const events = t.events();
      const id = await deploy(t, await compile(burner(100_000_000)), 'burner');
      const { message_id } = await t.service.send({ receiver: id, message_type: 'request', content: 'go' }, ctx);
      await waitForState(t, id, 'executing');
      await t.service.undeploy(id, ctx);
      const reply = messages(events, 'delivered').find((m) => m.receiver === CLIENT && m.in_reply_to === message_id);
      assert.equal(reply?.content, 'done', 'the reply went out before the undeploy returned');
      assert.deepEqual(transitions(events, id).slice(-2).map((e) => `${e.from}>${e.to}`), ['running>stopping', 'stopping>stopped']);
    } finally {
      await t.stop();
    }
  });

  it('shutdown: an execution still running at agent_shutdown_timeout is cut and its sender told', async () => {
    const clock = createSimulatedClock();
    const t = await startTestServer({ clock, overrides: { 'runtime.agent_shutdown_timeout': '5s', 'runtime.fuel_per_execution': 10_000_000_000 } });
    try {
      const events = t.events();
      const id = await deploy(t, await compile(burner(400_000_000)), 'slow');
      const { message_id } = await t.service.send({ receiver: id, message_type: 'request', content: 'go' }, ctx);
      await waitForState(t, id, 'executing');
      const undeploying = t.service.undeploy(id, ctx);
      await until(() => transitions(events, id).some((e) => e.to === 'stopping'), 'stopping');
      await clock.advance(5_000);
      await undeploying;
      assert.equal(transitions(events, id).at(-1)!.reason, 'killed: shutdown_timeout');
      const failure = await until(() => messages(events, 'platform').find((m) => m.in_reply_to === message_id), 'the failure to the sender');
      assert.match(String(failure.content), /stopped before its execution finished/);
      assert.equal(messages(events, 'delivered').find((m) => m.in_reply_to === message_id), undefined, 'its output was discarded');
    } finally {
      await t.stop();
    }
  });
});
