import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createFixedRandom, createSimulatedClock, createSupervisor, type SupervisorOptions } from '../../supervisors/index.js';
import { brief, createFakeWorld, recordTransitions, type SpecOptions } from './fake-child.js';

async function setup(strategy: string, children: Record<string, SpecOptions> = { a: {}, b: {}, c: {} }, options: Partial<SupervisorOptions> = {}) {
  const clock = createSimulatedClock();
  const world = createFakeWorld();
  const supervisor = createSupervisor({
    id: 'sup',
    strategy,
    clock,
    random: createFixedRandom(0.5),
    children: Object.entries(children).map(([id, spec]) => world.spec(id, spec)),
    ...options,
  });
  const transitions = recordTransitions(supervisor);
  await supervisor.start();
  transitions.length = 0;
  world.clearLog();
  return { clock, world, supervisor, transitions };
}

/** Which instance of each child is current: 1 = never restarted. */
const generations = (world: ReturnType<typeof createFakeWorld>, ids: string[]) => ids.map((id) => world.current(id).startNumber);

describe('supervisor: strategies', () => {
  it('one_for_one: only the crashed child restarts', async () => {
    const { clock, world } = await setup('one_for_one');
    world.current('b').crash();
    await clock.advance(100);
    assert.deepEqual(world.log, ['start b']);
    assert.deepEqual(generations(world, ['a', 'b', 'c']), [1, 2, 1]);
  });

  it('one_for_all: the others stop in reverse order, then all start in order', async () => {
    const { clock, world, transitions } = await setup('one_for_all');
    world.current('b').crash('trap');
    await clock.settle();
    assert.deepEqual(world.log, ['stop c', 'stop a']);
    assert.deepEqual(brief(transitions), ['b running>restarting', 'c running>restarting', 'a running>restarting']);
    assert.deepEqual(transitions.map((t) => [t.reason, t.attempt, t.delayMs]), [
      ['trap', 1, 100],
      ['sibling_restart: b', undefined, 100],
      ['sibling_restart: b', undefined, 100],
    ]);
    await clock.advance(99);
    assert.equal(world.log.length, 2);
    await clock.advance(1);
    assert.deepEqual(world.log, ['stop c', 'stop a', 'start a', 'start b', 'start c']);
    assert.deepEqual(generations(world, ['a', 'b', 'c']), [2, 2, 2]);
  });

  it('rest_for_one: the children started after it restart with it, earlier ones do not', async () => {
    const { clock, world } = await setup('rest_for_one', { a: {}, b: {}, c: {}, d: {} });
    world.current('b').crash();
    await clock.advance(100);
    assert.deepEqual(world.log, ['stop d', 'stop c', 'start b', 'start c', 'start d']);
    assert.deepEqual(generations(world, ['a', 'b', 'c', 'd']), [1, 2, 2, 2]);
  });

  it('the backoff of a group counts from when its siblings are down', async () => {
    const { clock, world } = await setup('one_for_all', { a: {}, b: {}, c: { stop: 'hang', shutdownTimeoutMs: 1000 } });
    world.current('a').crash();
    await clock.advance(1000);
    assert.deepEqual(world.log, ['stop c', 'kill c', 'stop b']);
    await clock.advance(99);
    assert.equal(world.starts('a'), 1);
    await clock.advance(1);
    assert.deepEqual(generations(world, ['a', 'b', 'c']), [2, 2, 2]);
  });

  it('temporary siblings are stopped and forgotten, not restarted', async () => {
    const { clock, world, supervisor } = await setup('one_for_all', { a: {}, t: { restart: 'temporary' }, b: {} });
    world.current('a').crash();
    await clock.advance(100);
    assert.equal(supervisor.getChild('t'), undefined);
    assert.equal(world.starts('t'), 1);
    assert.deepEqual(generations(world, ['a', 'b']), [2, 2]);
  });

  it('a sibling stopped by hand stays stopped through a group restart', async () => {
    const { clock, world, supervisor } = await setup('one_for_all');
    await supervisor.terminateChild('c');
    world.current('a').crash();
    await clock.advance(100);
    assert.equal(supervisor.getChild('c')?.state, 'stopped');
    assert.equal(world.starts('c'), 1);
    assert.deepEqual(generations(world, ['a', 'b']), [2, 2]);
  });

  it('a member failing to start in a group starts a new group restart', async () => {
    const { clock, world, supervisor, transitions } = await setup('rest_for_one');
    world.set('b', { start: 'throw' });
    world.current('a').crash();
    await clock.advance(100);
    // a started, b failed: b and c (still waiting) restart again after b's second backoff.
    assert.deepEqual(world.log, ['stop c', 'stop b', 'start a', 'start b']);
    const last = transitions.at(-1)!;
    assert.deepEqual([last.id, last.to, last.attempt, last.delayMs], ['b', 'restarting', 1, 100]);
    world.set('b', { start: 'sync' });
    await clock.advance(100);
    assert.deepEqual(world.log.slice(4), ['start b', 'start c']);
    assert.deepEqual(generations(world, ['a', 'b', 'c']), [2, 2, 2]);
    assert.equal(supervisor.countChildren().running, 3);
  });

  it('a crash while a group waits folds the waiting children into the new group', async () => {
    const { clock, world, supervisor } = await setup('rest_for_one', { a: {}, b: {}, c: {}, d: {} });
    world.current('c').crash();
    await clock.advance(50);
    world.current('b').crash();
    await clock.settle();
    assert.deepEqual(world.log, ['stop d']);
    // The first group's timer (t = 100) finds its members taken over and starts nothing.
    await clock.advance(50);
    assert.deepEqual(world.log, ['stop d']);
    await clock.advance(50);
    assert.deepEqual(world.log, ['stop d', 'start b', 'start c', 'start d']);
    assert.deepEqual(generations(world, ['a', 'b', 'c', 'd']), [1, 2, 2, 2]);
    assert.equal(supervisor.countChildren().running, 4);
    assert.equal(clock.pendingTimers(), 0);
  });

  it('stopping during a group restart stops everyone and starts no one', async () => {
    const { clock, world, supervisor } = await setup('one_for_all', { a: {}, b: {}, c: { stop: 'hang', shutdownTimeoutMs: 1000 } });
    world.current('a').crash();
    await clock.advance(500);
    const stopped = supervisor.stop();
    await clock.advance(500);
    await stopped;
    await clock.advance(10_000);
    assert.deepEqual(world.log, ['stop c', 'kill c', 'stop b']);
    assert.deepEqual(supervisor.countChildren(), { specs: 3, starting: 0, running: 0, restarting: 0, stopping: 0, stopped: 3, failed: 0 });
    assert.equal(clock.pendingTimers(), 0);
  });
});
