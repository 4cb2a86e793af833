/**
 * What a child learns from its supervisor beyond `ChildHandle`: the
 * decisions about it once it is down (`onDecision`), why each start happens
 * (`StartContext.reason`), when the supervisor stops waiting for a start
 * (`StartContext.signal`), and a start failure with a reason of its own
 * (`ExitError`). Agents are built on these (src/agents/agent-machine.ts).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ExitError,
  abnormalExit,
  createExitSignal,
  createFixedRandom,
  createSimulatedClock,
  createSupervisor,
  type ChildDecision,
  type ChildHandle,
  type ExitSignal,
  type StartContext,
  type Supervisor,
} from '../../supervisors/index.js';
import { decisionFor } from '../../supervisors/child-decision.js';

/** A child whose starts and exits the test drives, recording what the supervisor tells it. */
function resident(id: string) {
  const decisions: ChildDecision[] = [];
  const starts: StartContext[] = [];
  const aborts: unknown[] = [];
  let exit: ExitSignal | undefined;
  let hang = false;
  let failWith: Error | undefined;
  const spec = {
    id,
    onDecision: (decision: ChildDecision) => decisions.push(decision),
    start: (context: StartContext): ChildHandle | Promise<ChildHandle> => {
      starts.push(context);
      context.signal.addEventListener('abort', () => aborts.push(context.signal.reason));
      if (failWith !== undefined) return Promise.reject(failWith);
      if (hang) return new Promise<ChildHandle>(() => {});
      exit = createExitSignal();
      return { onExit: exit.onExit, stop: () => undefined, kill: () => undefined };
    },
  };
  return {
    spec,
    decisions,
    starts,
    aborts,
    crash: (reason: string) => exit!.exit(abnormalExit(reason)),
    hangNext: () => (hang = true),
    failNext: (error: Error | undefined) => (failWith = error),
  };
}

async function agents(clock = createSimulatedClock(), maxRestarts = 2): Promise<Supervisor> {
  const supervisor = createSupervisor({ id: 'agents', intensityScope: 'child', maxRestarts, clock, random: createFixedRandom(0.5) });
  await supervisor.start();
  return supervisor;
}

describe('supervisor: what a child is told', () => {
  it('a transition to restarting, failed or stopped is a decision; the others are not', () => {
    assert.deepEqual(decisionFor('restarting', 'trap', 2, 200), { type: 'restart', reason: 'trap', attempt: 2, delayMs: 200 });
    assert.deepEqual(decisionFor('restarting', 'sibling_restart: a', undefined, 100), { type: 'restart', reason: 'sibling_restart: a', delayMs: 100 });
    assert.deepEqual(decisionFor('failed', 'reached_max_restart_intensity: trap'), { type: 'give_up', reason: 'reached_max_restart_intensity: trap' });
    assert.deepEqual(decisionFor('stopped', 'terminated'), { type: 'stop', reason: 'terminated' });
    for (const to of ['starting', 'running', 'stopping'] as const) assert.equal(decisionFor(to, 'x'), undefined, to);
  });

  it('each crash brings a restart decision with its backoff, and one too many a give_up', async () => {
    const clock = createSimulatedClock();
    const supervisor = await agents(clock);
    const child = resident('a');
    await supervisor.startChild(child.spec);
    for (const delayMs of [100, 200]) {
      child.crash('trap');
      await clock.advance(delayMs);
    }
    child.crash('trap');
    assert.deepEqual(child.decisions, [
      { type: 'restart', reason: 'trap', attempt: 1, delayMs: 100 },
      { type: 'restart', reason: 'trap', attempt: 2, delayMs: 200 },
      { type: 'give_up', reason: 'reached_max_restart_intensity: trap' },
    ]);
    assert.deepEqual(child.starts.map((s) => [s.reason, s.restarts]), [['start', 0], ['restart', 1], ['restart', 2]]);
    await supervisor.restartChild('a');
    assert.equal(child.starts.at(-1)!.reason, 'restart_requested');
    await supervisor.stop();
  });

  it('a failed first start and a stop during the backoff are stop decisions', async () => {
    const clock = createSimulatedClock();
    const supervisor = await agents(clock);
    const failing = resident('f');
    failing.failNext(new Error('no module'));
    await assert.rejects(supervisor.startChild(failing.spec), /failed to start: start_failed: no module/);
    assert.deepEqual(failing.decisions, [{ type: 'stop', reason: 'start_failed: no module' }]);

    const child = resident('a');
    await supervisor.startChild(child.spec);
    child.crash('trap');
    await supervisor.terminateChild('a');
    assert.deepEqual(child.decisions.map((d) => d.type), ['restart', 'stop']);
    assert.equal(child.decisions.at(-1)!.reason, 'terminated');
    await clock.advance(1_000);
    assert.equal(child.starts.length, 1, 'the restart was cancelled');
    await supervisor.stop();
  });

  it('a start that rejects with an ExitError fails with that exit, its error kept as the cause', async () => {
    const supervisor = await agents();
    const child = resident('a');
    const cause = new Error('the pool said no');
    child.failNext(new ExitError(abnormalExit('start_timeout', cause)));
    await assert.rejects(supervisor.startChild(child.spec), (error: Error) => error.message.endsWith('failed to start: start_timeout') && error.cause === cause);
    assert.deepEqual(child.decisions, [{ type: 'stop', reason: 'start_timeout' }]);
    await supervisor.stop();
  });

  it('the start signal is aborted with the stop reason when a stop comes during a start, and at the start timeout', async () => {
    const clock = createSimulatedClock();
    const supervisor = await agents(clock);
    const child = resident('a');
    await supervisor.startChild(child.spec);
    child.hangNext();
    child.crash('trap');
    await clock.advance(100);
    assert.equal(child.starts.length, 2, 'restarting, and the start hangs');
    const stopping = supervisor.stop('shutdown');
    assert.deepEqual(child.aborts, ['shutdown']);
    await supervisor.kill('killed');
    await stopping;

    const timed = await agents(clock);
    const slow = resident('slow');
    slow.hangNext();
    const starting = assert.rejects(timed.startChild({ ...slow.spec, startTimeoutMs: 50 }), /start_timeout/);
    await clock.advance(50);
    await starting;
    assert.deepEqual(slow.aborts, ['start_timeout']);
    await timed.stop();
  });
});
