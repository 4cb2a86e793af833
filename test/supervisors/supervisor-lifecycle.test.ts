import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CHILD_STATES, SupervisorError, createFixedRandom, createSimulatedClock, createSupervisor, type ChildExit, type SupervisorOptions } from '../../supervisors/index.js';
import { brief, createFakeWorld, recordTransitions, type SpecOptions } from './fake-child.js';

function setup(children: Record<string, SpecOptions> = { a: {}, b: {}, c: {} }, options: Partial<SupervisorOptions> = {}) {
  const clock = createSimulatedClock();
  const world = createFakeWorld();
  const supervisor = createSupervisor({
    id: 'root',
    clock,
    random: createFixedRandom(0.5),
    children: Object.entries(children).map(([id, spec]) => world.spec(id, spec)),
    ...options,
  });
  const transitions = recordTransitions(supervisor);
  const exits: ChildExit[] = [];
  supervisor.onExit((exit) => exits.push(exit));
  return { clock, world, supervisor, transitions, exits };
}

describe('supervisor: start and stop', () => {
  it('starts static children one after another, each awaited', async () => {
    const { world, supervisor, transitions } = setup({ a: { start: 'async' }, b: { start: 'async' }, c: {} });
    const started = supervisor.start();
    assert.equal(supervisor.state, 'starting');
    assert.deepEqual(world.log, ['start a']);
    assert.equal(await started, supervisor);
    assert.equal(supervisor.state, 'running');
    assert.deepEqual(world.log, ['start a', 'start b', 'start c']);
    assert.deepEqual(brief(transitions), ['a ->starting', 'a starting>running', 'b ->starting', 'b starting>running', 'c ->starting', 'c starting>running']);
    await assert.rejects(supervisor.start(), /already started/);
  });

  it('a child failing to start stops the ones before it, in reverse, and the start rejects', async () => {
    const { world, supervisor, exits } = setup({ a: {}, b: {}, c: { start: 'throw' }, d: {} });
    await assert.rejects(supervisor.start(), (error: SupervisorError) => {
      assert.equal(error.code, 'start_failed');
      assert.equal(error.childId, 'c');
      assert.equal((error.cause as Error).message, 'c will not start');
      return true;
    });
    assert.deepEqual(world.log, ['start a', 'start b', 'start c', 'stop b', 'stop a']);
    assert.equal(supervisor.state, 'stopped');
    assert.deepEqual([exits[0]?.kind, exits[0]?.reason], ['abnormal', 'start_failed']);
  });

  it('a start overrunning startTimeoutMs fails the supervisor start', async () => {
    const { clock, supervisor } = setup({ a: {}, b: { start: 'hang', startTimeoutMs: 10_000 } });
    const started = supervisor.start();
    started.catch(() => {});
    await clock.advance(10_000);
    await assert.rejects(started, /child "b" failed to start: start_timeout/);
  });

  it('stops children one at a time in reverse start order, then exits normally', async () => {
    const { clock, world, supervisor, transitions, exits } = setup();
    await supervisor.start();
    world.clearLog();
    transitions.length = 0;
    await supervisor.stop();
    assert.deepEqual(world.log, ['stop c', 'stop b', 'stop a']);
    assert.deepEqual(brief(transitions), ['c running>stopping', 'c stopping>stopped', 'b running>stopping', 'b stopping>stopped', 'a running>stopping', 'a stopping>stopped']);
    assert.deepEqual(exits, [{ kind: 'normal', reason: 'shutdown' }]);
    assert.equal(supervisor.state, 'stopped');
    assert.equal(clock.pendingTimers(), 0);
    assert.equal(supervisor.stop(), supervisor.stop());
  });

  it('ordered stop: a child that will not stop is killed at its timeout before the next is asked', async () => {
    const { clock, world, supervisor, transitions } = setup({ a: {}, b: { stop: 'hang', shutdownTimeoutMs: 2000 } });
    await supervisor.start();
    world.clearLog();
    const stopped = supervisor.stop();
    await clock.advance(1999);
    assert.deepEqual(world.log, ['stop b']);
    await clock.advance(1);
    await stopped;
    assert.deepEqual(world.log, ['stop b', 'kill b', 'stop a']);
    assert.equal(transitions.find((t) => t.id === 'b' && t.to === 'stopped')?.reason, 'killed: shutdown_timeout');
  });

  it('concurrent stop asks every child at once', async () => {
    const { clock, world, supervisor } = setup({ a: { stop: 'hang', shutdownTimeoutMs: 1000 }, b: { stop: 'hang', shutdownTimeoutMs: 1000 }, c: {} }, { shutdownOrder: 'concurrent' });
    await supervisor.start();
    world.clearLog();
    const stopped = supervisor.stop();
    await clock.settle();
    assert.deepEqual(world.log, ['stop c', 'stop b', 'stop a']);
    await clock.advance(1000);
    await stopped;
    assert.deepEqual(world.log.slice(3).sort(), ['kill a', 'kill b']);
  });

  it('kill cuts short a stop waiting on a child that never stops', async () => {
    const { world, supervisor, exits } = setup({ a: {}, b: { stop: 'hang', shutdownTimeoutMs: Infinity } });
    await supervisor.start();
    const stopped = supervisor.stop();
    await supervisor.kill('parent_timeout');
    await stopped;
    assert.deepEqual(world.current('b').killCalls, ['parent_timeout']);
    assert.deepEqual(world.current('a').killCalls, ['parent_timeout']);
    assert.deepEqual(exits, [{ kind: 'normal', reason: 'shutdown' }]);
  });

  it('kill without a stop kills every child without asking and exits abnormally', async () => {
    const { world, supervisor, exits, transitions } = setup();
    await supervisor.start();
    await supervisor.kill();
    assert.deepEqual(world.log.filter((line) => !line.startsWith('start')), ['kill c', 'kill b', 'kill a']);
    assert.deepEqual(exits, [{ kind: 'abnormal', reason: 'killed' }]);
    assert.equal(transitions.at(-1)?.reason, 'killed: killed');
  });

  it('stopping cancels pending restarts', async () => {
    const { clock, world, supervisor, transitions } = setup();
    await supervisor.start();
    world.current('a').crash();
    await supervisor.stop();
    assert.equal(clock.pendingTimers(), 0);
    await clock.advance(60_000);
    assert.equal(world.starts('a'), 1);
    assert.equal(transitions.filter((t) => t.id === 'a').at(-1)?.to, 'stopped');
  });

  it('crashes during shutdown are not restarted', async () => {
    const { clock, world, supervisor } = setup({ a: {}, b: { stop: 'hang', shutdownTimeoutMs: 1000 } });
    await supervisor.start();
    const stopped = supervisor.stop();
    world.current('a').crash();
    await clock.advance(1000);
    await stopped;
    assert.equal(world.starts('a'), 1);
    assert.deepEqual(world.current('a').stopCalls, []);
  });
});

describe('supervisor: dynamic children', () => {
  it('startChild, terminateChild, restartChild, deleteChild', async () => {
    const { world, supervisor } = setup({}, { shutdownOrder: 'concurrent' });
    await assert.rejects(supervisor.startChild(world.spec('x')), { code: 'not_running' });
    await supervisor.start();
    const info = await supervisor.startChild(world.spec('x', { restart: 'transient' }));
    assert.deepEqual({ ...info, handle: info.handle === world.current('x') }, { id: 'x', kind: 'worker', restart: 'transient', state: 'running', restarts: 0, handle: true });
    await assert.rejects(supervisor.startChild(world.spec('x')), { code: 'already_exists', childId: 'x' });
    assert.throws(() => supervisor.deleteChild('x'), { code: 'running' });

    await supervisor.terminateChild('x');
    assert.deepEqual(world.current('x').stopCalls, ['terminated']);
    assert.equal(supervisor.getChild('x')?.state, 'stopped');
    assert.equal(supervisor.getChild('x')?.handle, undefined);
    await supervisor.terminateChild('x');

    assert.equal((await supervisor.restartChild('x')).state, 'running');
    assert.equal(world.starts('x'), 2);
    await assert.rejects(supervisor.restartChild('x'), { code: 'running' });

    await supervisor.terminateChild('x');
    supervisor.deleteChild('x');
    assert.equal(supervisor.getChild('x'), undefined);
    assert.throws(() => supervisor.deleteChild('x'), { code: 'not_found' });
    await assert.rejects(supervisor.terminateChild('x'), { code: 'not_found' });
    assert.deepEqual(supervisor.countChildren(), { specs: 0, starting: 0, running: 0, restarting: 0, stopping: 0, stopped: 0, failed: 0 });
    assert.deepEqual(Object.keys(supervisor.countChildren()), ['specs', ...CHILD_STATES]);
  });

  it('a child that fails to start is not kept', async () => {
    const { world, supervisor, transitions } = setup({});
    await supervisor.start();
    await assert.rejects(supervisor.startChild(world.spec('bad', { start: 'throw' })), { code: 'start_failed', childId: 'bad' });
    assert.equal(supervisor.getChild('bad'), undefined);
    assert.deepEqual(brief(transitions), ['bad ->starting', 'bad starting>stopped']);
    assert.equal(supervisor.countChildren().specs, 0);
  });

  it('a malformed spec is a programming error', async () => {
    const { supervisor } = setup({});
    await supervisor.start();
    await assert.rejects(supervisor.startChild({ id: '', start: () => assert.fail() }), TypeError);
    assert.throws(() => createSupervisor({ id: 's', children: [{ id: 'a', start: () => assert.fail() }, { id: 'a', start: () => assert.fail() }] }), /two children have the id "a"/);
    assert.throws(() => createSupervisor({ id: 's', strategy: 'one_for_most' }), /unknown restart strategy/);
    assert.throws(() => createSupervisor({ id: 's', maxRestarts: -1 }), RangeError);
    assert.throws(() => createSupervisor({ id: '' }), TypeError);
  });

  it('terminating a temporary child forgets it; terminating twice waits for the same stop', async () => {
    const { clock, world, supervisor } = setup({});
    await supervisor.start();
    await supervisor.startChild(world.spec('t', { restart: 'temporary', stop: 'hang', shutdownTimeoutMs: 100 }));
    const first = supervisor.terminateChild('t');
    const second = supervisor.terminateChild('t');
    await clock.advance(100);
    await Promise.all([first, second]);
    assert.deepEqual(world.current('t').stopCalls, ['terminated']);
    assert.deepEqual(world.current('t').killCalls, ['shutdown_timeout']);
    assert.equal(supervisor.getChild('t'), undefined);
  });

  it('terminating a child waiting for its restart cancels the restart', async () => {
    const { clock, world, supervisor } = setup({});
    await supervisor.start();
    await supervisor.startChild(world.spec('x'));
    world.current('x').crash();
    await supervisor.terminateChild('x');
    await clock.advance(1000);
    assert.equal(world.starts('x'), 1);
    assert.equal(supervisor.getChild('x')?.state, 'stopped');
  });

  it('terminating a child while it starts stops it once started', async () => {
    const { world, supervisor, transitions } = setup({});
    await supervisor.start();
    const started = supervisor.startChild(world.spec('x', { start: 'async' }));
    await supervisor.terminateChild('x');
    await started;
    assert.equal(supervisor.getChild('x')?.state, 'stopped');
    assert.deepEqual(world.current('x').stopCalls, ['terminated']);
    assert.deepEqual(brief(transitions), ['x ->starting', 'x starting>stopping', 'x stopping>stopped']);
  });

  it('whichChildren lists every child in start order', async () => {
    const { world, supervisor } = setup();
    await supervisor.start();
    await supervisor.startChild(world.spec('d'));
    assert.deepEqual(supervisor.whichChildren().map((c) => `${c.id}:${c.state}`), ['a:running', 'b:running', 'c:running', 'd:running']);
  });
});
