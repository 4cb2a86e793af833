import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ChildInstance } from '../../supervisors/child-instance.js';
import { createSimulatedClock, resolveChildSpec, type ChildExit } from '../../supervisors/index.js';
import { createFakeWorld, type SpecOptions } from './fake-child.js';

function setup(options: SpecOptions = {}) {
  const clock = createSimulatedClock();
  const world = createFakeWorld();
  const crashes: ChildExit[] = [];
  const instance = new ChildInstance(resolveChildSpec(world.spec('c', options)), clock, (_instance, exit) => crashes.push(exit));
  return { clock, world, crashes, instance };
}

describe('child instance', () => {
  it('starts, reports a crash once, and is down after it', async () => {
    const { world, crashes, instance } = setup();
    assert.equal(await instance.start({ id: 'c', restarts: 0, reason: 'start' }), undefined);
    assert.equal(instance.phase, 'up');
    world.current('c').crash('trap');
    world.current('c').crash('again');
    assert.deepEqual(crashes, [{ kind: 'abnormal', reason: 'trap' }]);
    assert.equal(instance.phase, 'down');
    assert.deepEqual(await instance.shutdown('shutdown'), { how: 'exited', reason: 'shutdown' });
  });

  for (const start of ['throw', 'async-reject'] as const) {
    it(`a start that ${start === 'throw' ? 'throws' : 'rejects'} is a failed start, not a crash`, async () => {
      const clock = createSimulatedClock();
      const crashes: ChildExit[] = [];
      const spec = resolveChildSpec({
        id: 'c',
        start: start === 'throw' ? () => { throw new Error('no module'); } : () => Promise.reject(new Error('no module')),
      });
      const instance = new ChildInstance(spec, clock, (_i, exit) => crashes.push(exit));
      const failure = await instance.start({ id: 'c', restarts: 0, reason: 'start' });
      assert.equal(failure?.reason, 'start_failed: no module');
      assert.equal((failure?.error as Error).message, 'no module');
      assert.deepEqual(crashes, []);
      assert.deepEqual(await instance.shutdown('x'), { how: 'never_started', reason: 'x' });
    });
  }

  it('a start overrunning startTimeoutMs fails, and the handle arriving later is killed', async () => {
    const clock = createSimulatedClock();
    let deliver: ((handle: import('../../supervisors/index.js').ChildHandle) => void) | undefined;
    const world = createFakeWorld();
    const late = world.spec('late');
    const spec = resolveChildSpec({
      id: 'c',
      startTimeoutMs: 1000,
      start: () => new Promise((resolve) => (deliver = resolve)),
    });
    const instance = new ChildInstance(spec, clock, () => assert.fail('no crash expected'));
    const started = instance.start({ id: 'c', restarts: 0, reason: 'start' });
    await clock.advance(999);
    let settled = false;
    void started.then(() => (settled = true));
    await clock.settle();
    assert.equal(settled, false);
    await clock.advance(1);
    assert.deepEqual(await started, { kind: 'abnormal', reason: 'start_timeout' });
    const handle = await late.start({ id: 'late', restarts: 0, reason: 'start', signal: new AbortController().signal });
    deliver!(handle);
    await clock.settle();
    assert.deepEqual(world.current('late').killCalls, ['start_abandoned']);
  });

  it('graceful stop: stop is called and the shutdown timer cleared', async () => {
    const { clock, world, instance } = setup({ shutdownTimeoutMs: 5000 });
    await instance.start({ id: 'c', restarts: 0, reason: 'start' });
    assert.deepEqual(await instance.shutdown('shutdown'), { how: 'stopped', reason: 'shutdown' });
    assert.deepEqual(world.current('c').stopCalls, ['shutdown']);
    assert.deepEqual(world.current('c').killCalls, []);
    assert.equal(clock.pendingTimers(), 0);
  });

  it('a stop that only resolves (no exit) also counts as stopped', async () => {
    const { instance } = setup({ stop: 'resolve' });
    await instance.start({ id: 'c', restarts: 0, reason: 'start' });
    assert.equal((await instance.shutdown('s')).how, 'stopped');
  });

  it('a stop that hangs is followed by kill exactly at shutdownTimeoutMs', async () => {
    const { clock, world, instance } = setup({ stop: 'hang', shutdownTimeoutMs: 5000 });
    await instance.start({ id: 'c', restarts: 0, reason: 'start' });
    const result = instance.shutdown('shutdown');
    await clock.advance(4999);
    assert.deepEqual(world.current('c').killCalls, []);
    await clock.advance(1);
    assert.deepEqual(await result, { how: 'killed', reason: 'killed: shutdown_timeout' });
    assert.deepEqual(world.current('c').killCalls, ['shutdown_timeout']);
  });

  it('a stop that rejects is followed by kill at once', async () => {
    const { world, instance } = setup({ stop: 'reject' });
    await instance.start({ id: 'c', restarts: 0, reason: 'start' });
    assert.deepEqual(await instance.shutdown('shutdown'), { how: 'killed', reason: 'killed: stop_failed' });
    assert.deepEqual(world.current('c').killCalls, ['stop_failed']);
  });

  it('shutdownTimeoutMs 0 kills without asking (brutal kill)', async () => {
    const { world, instance } = setup({ shutdownTimeoutMs: 0 });
    await instance.start({ id: 'c', restarts: 0, reason: 'start' });
    assert.deepEqual(await instance.shutdown('shutdown'), { how: 'killed', reason: 'killed: shutdown' });
    assert.deepEqual(world.current('c').stopCalls, []);
  });

  it('kill cuts short a graceful stop in progress; every caller gets the same result', async () => {
    const { world, instance } = setup({ stop: 'hang', shutdownTimeoutMs: Infinity });
    await instance.start({ id: 'c', restarts: 0, reason: 'start' });
    const first = instance.shutdown('shutdown');
    const second = instance.kill('parent_gave_up');
    assert.equal(first, second);
    assert.deepEqual(await first, { how: 'killed', reason: 'killed: parent_gave_up' });
    assert.deepEqual(world.current('c').killCalls, ['parent_gave_up']);
  });

  it('an exit during shutdown is the stop, not a crash', async () => {
    const { world, crashes, instance } = setup({ stop: 'hang', shutdownTimeoutMs: 5000 });
    await instance.start({ id: 'c', restarts: 0, reason: 'start' });
    const result = instance.shutdown('shutdown');
    world.current('c').end('drained');
    assert.deepEqual(await result, { how: 'stopped', reason: 'shutdown' });
    assert.deepEqual(crashes, []);
  });

  it('shutdown while starting waits for the handle, then stops it', async () => {
    const { clock, world, instance } = setup({ start: 'async', shutdownTimeoutMs: 5000 });
    const started = instance.start({ id: 'c', restarts: 0, reason: 'start' });
    const result = instance.shutdown('shutdown');
    assert.equal(await started, undefined);
    assert.deepEqual(await result, { how: 'stopped', reason: 'shutdown' });
    assert.deepEqual(world.current('c').stopCalls, ['shutdown']);
    assert.equal(clock.pendingTimers(), 0);
  });

  it('shutdown while a start hangs gives up at the timeout and settles the start', async () => {
    const { clock, instance } = setup({ start: 'hang', shutdownTimeoutMs: 200 });
    const started = instance.start({ id: 'c', restarts: 0, reason: 'start' });
    const result = instance.shutdown('shutdown');
    await clock.advance(200);
    assert.deepEqual(await result, { how: 'killed', reason: 'killed: shutdown_timeout' });
    assert.deepEqual(await started, { kind: 'abnormal', reason: 'start_abandoned' });
  });

  it('a child that exits while being subscribed is reported', async () => {
    const clock = createSimulatedClock();
    const crashes: ChildExit[] = [];
    const world = createFakeWorld();
    const dead = world.spec('dead');
    const spec = resolveChildSpec({
      id: 'c',
      start: async () => {
        const handle = await dead.start({ id: 'dead', restarts: 0, reason: 'start', signal: new AbortController().signal });
        world.current('dead').crash('died young');
        return handle;
      },
    });
    const instance = new ChildInstance(spec, clock, (_i, exit) => crashes.push(exit));
    assert.equal(await instance.start({ id: 'c', restarts: 0, reason: 'start' }), undefined);
    assert.deepEqual(crashes, [{ kind: 'abnormal', reason: 'died young' }]);
    assert.equal(instance.phase, 'down');
  });
});
