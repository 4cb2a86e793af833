import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createFixedRandom, createSimulatedClock, createSupervisor, type ChildExit, type SupervisorOptions } from '../../supervisors/index.js';
import { brief, createFakeWorld, recordTransitions } from './fake-child.js';

async function setup(options: Partial<SupervisorOptions> = {}, children = ['a', 'b']) {
  const clock = createSimulatedClock();
  const world = createFakeWorld();
  const supervisor = createSupervisor({
    id: 'sup',
    clock,
    random: createFixedRandom(0.5),
    children: children.map((id) => world.spec(id)),
    ...options,
  });
  const transitions = recordTransitions(supervisor);
  const exits: ChildExit[] = [];
  supervisor.onExit((exit) => exits.push(exit));
  await supervisor.start();
  transitions.length = 0;
  return { clock, world, supervisor, transitions, exits };
}

describe('supervisor: restarts', () => {
  it('restarts a crashed child after exactly the backoff, doubling each time', async () => {
    const { clock, world, supervisor, transitions } = await setup({ intensityScope: 'child' });
    for (const [attempt, delay] of [[1, 100], [2, 200], [3, 400], [4, 800], [5, 1600]] as const) {
      const before = world.starts('a');
      world.current('a').crash('trap');
      const restarting = transitions.at(-1)!;
      assert.deepEqual(restarting, { supervisor: 'sup', id: 'a', from: 'running', to: 'restarting', reason: 'trap', attempt, delayMs: delay, at: clock.now() });
      await clock.advance(delay - 1);
      assert.equal(world.starts('a'), before, `attempt ${attempt}: not before ${delay} ms`);
      await clock.advance(1);
      assert.equal(world.starts('a'), before + 1);
      assert.equal(supervisor.getChild('a')?.state, 'running');
      assert.equal(supervisor.getChild('a')?.restarts, attempt);
    }
    assert.deepEqual(brief(transitions.slice(0, 3)), ['a running>restarting', 'a restarting>starting', 'a starting>running']);
    assert.equal(world.current('b').startNumber, 1);
  });

  it('jitters each delay with the injected random source', async () => {
    const { clock, world, transitions } = await setup({ random: createFixedRandom(0, 0.999_999, 0.25), intensityScope: 'child' });
    const delays: number[] = [];
    for (let i = 0; i < 3; i += 1) {
      world.current('a').crash();
      const delay = transitions.at(-1)!.delayMs!;
      delays.push(delay);
      await clock.advance(delay);
    }
    assert.deepEqual(delays, [80, 240, 360]);
  });

  it('the backoff starts over once a child has been quiet for a whole period', async () => {
    const { clock, world, transitions } = await setup({ periodMs: 10_000 });
    world.current('a').crash();
    await clock.advance(100);
    world.current('a').crash();
    assert.equal(transitions.at(-1)!.delayMs, 200);
    await clock.advance(200);
    await clock.advance(10_000);
    world.current('a').crash();
    assert.deepEqual([transitions.at(-1)!.attempt, transitions.at(-1)!.delayMs], [1, 100]);
  });

  it('passes the restart count to start', async () => {
    const clock = createSimulatedClock();
    const seen: number[] = [];
    const world = createFakeWorld();
    const inner = world.spec('a');
    const supervisor = createSupervisor({ id: 'sup', clock, random: createFixedRandom(0.5), children: [{ ...inner, start: (context) => (seen.push(context.restarts), inner.start(context)) }] });
    await supervisor.start();
    world.current('a').crash();
    await clock.advance(100);
    world.current('a').crash();
    await clock.advance(200);
    assert.deepEqual(seen, [0, 1, 2]);
  });

  it('a failed restart counts as one more crash', async () => {
    const { clock, world, transitions } = await setup({ intensityScope: 'child' });
    world.set('a', { start: 'throw' });
    world.current('a').crash('trap');
    await clock.advance(100);
    assert.deepEqual(transitions.at(-1), {
      supervisor: 'sup', id: 'a', from: 'starting', to: 'restarting', reason: 'start_failed: a will not start', attempt: 2, delayMs: 200, at: 100,
    });
    world.set('a', { start: 'sync' });
    await clock.advance(200);
    assert.equal(world.current('a').alive, true);
  });
});

describe('supervisor: restart types', () => {
  const cases: Array<['permanent' | 'transient' | 'temporary', 'crash' | 'end', 'restarted' | 'stopped' | 'removed']> = [
    ['permanent', 'crash', 'restarted'],
    ['permanent', 'end', 'restarted'],
    ['transient', 'crash', 'restarted'],
    ['transient', 'end', 'stopped'],
    ['temporary', 'crash', 'removed'],
    ['temporary', 'end', 'removed'],
  ];
  for (const [restart, how, outcome] of cases) {
    it(`${restart} child, ${how === 'crash' ? 'abnormal' : 'normal'} exit → ${outcome}`, async () => {
      const clock = createSimulatedClock();
      const world = createFakeWorld();
      const supervisor = createSupervisor({ id: 'sup', clock, random: createFixedRandom(0.5), children: [world.spec('c', { restart }), world.spec('other')] });
      await supervisor.start();
      const child = world.current('c');
      if (how === 'crash') child.crash();
      else child.end();
      await clock.advance(60_000);
      assert.equal(world.starts('c'), outcome === 'restarted' ? 2 : 1);
      if (outcome === 'removed') assert.equal(supervisor.getChild('c'), undefined);
      else assert.equal(supervisor.getChild('c')?.state, outcome === 'restarted' ? 'running' : 'stopped');
      assert.equal(supervisor.getChild('other')?.state, 'running');
      assert.equal(supervisor.state, 'running');
    });
  }
});

describe('supervisor: restart intensity', () => {
  it('per child: a child past its intensity goes to failed alone; the rest keep running', async () => {
    const { clock, world, supervisor, transitions, exits } = await setup({ intensityScope: 'child', maxRestarts: 2, periodMs: 60_000 });
    world.current('a').crash('one');
    await clock.advance(100);
    world.current('a').crash('two');
    await clock.advance(200);
    world.current('a').crash('three');
    assert.deepEqual(transitions.at(-1), {
      supervisor: 'sup', id: 'a', from: 'running', to: 'failed', reason: 'reached_max_restart_intensity: three', at: 300,
    });
    await clock.advance(60_000);
    assert.equal(world.starts('a'), 3);
    assert.equal(supervisor.state, 'running');
    assert.equal(supervisor.getChild('b')?.state, 'running');
    assert.equal(world.current('b').startNumber, 1);
    assert.deepEqual(exits, []);
    assert.equal(clock.pendingTimers(), 0);
    assert.deepEqual(supervisor.countChildren(), { specs: 2, starting: 0, running: 1, restarting: 0, stopping: 0, stopped: 0, failed: 1 });

    // Each child has its own count: b may still crash twice.
    world.current('b').crash();
    await clock.advance(100);
    world.current('b').crash();
    await clock.advance(200);
    assert.equal(supervisor.getChild('b')?.state, 'running');
  });

  it('per child: restartChild brings a failed child back with a fresh count', async () => {
    const { clock, world, supervisor } = await setup({ intensityScope: 'child', maxRestarts: 0 });
    world.current('a').crash();
    assert.equal(supervisor.getChild('a')?.state, 'failed');
    const info = await supervisor.restartChild('a');
    assert.equal(info.state, 'running');
    world.current('a').crash();
    assert.equal(supervisor.getChild('a')?.state, 'failed');
    await clock.advance(1000);
    assert.equal(world.starts('a'), 2);
  });

  it('per supervisor (OTP): restarts of all children count together; past them the supervisor stops everything and exits', async () => {
    const { clock, world, supervisor, transitions, exits } = await setup({ maxRestarts: 2, periodMs: 5000 });
    world.current('a').crash();
    await clock.advance(100);
    world.current('b').crash();
    await clock.advance(100);
    transitions.length = 0;
    world.current('a').crash('third');
    await clock.settle();
    assert.deepEqual(brief(transitions), ['a running>failed', 'b running>stopping', 'b stopping>stopped']);
    assert.equal(transitions[0]!.reason, 'reached_max_restart_intensity: third');
    assert.equal(supervisor.state, 'stopped');
    assert.equal(exits.length, 1);
    assert.equal(exits[0]!.kind, 'abnormal');
    assert.equal(exits[0]!.reason, 'reached_max_restart_intensity');
    assert.match(String((exits[0]!.error as Error).message), /more than 2 restarts within 5000 ms, the last of "a" \(third\)/);
    assert.equal(world.current('b').stopCalls.length, 1);
    assert.equal(clock.pendingTimers(), 0);
    await assert.rejects(supervisor.startChild(world.spec('late')), { code: 'not_running' });
  });

  it('per supervisor: crashes spread beyond the period never add up', async () => {
    const { clock, world, supervisor } = await setup({ maxRestarts: 1, periodMs: 1000 });
    for (let i = 0; i < 10; i += 1) {
      world.current(i % 2 ? 'a' : 'b').crash();
      await clock.advance(1000);
    }
    assert.equal(supervisor.state, 'running');
  });
});
