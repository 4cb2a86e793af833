import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createFixedRandom, createSimulatedClock, createSupervisor, supervisorSpec, type ChildExit, type Supervisor, type SupervisorOptions } from '../../supervisors/index.js';
import { createFakeWorld, recordTransitions } from './fake-child.js';

/** The server's shape: root (rest_for_one) over store, an agent supervisor, and the API. */
function tree(agents: Partial<SupervisorOptions> = {}, root: Partial<SupervisorOptions> = {}) {
  const clock = createSimulatedClock();
  const random = createFixedRandom(0.5);
  const world = createFakeWorld();
  const agentOptions: SupervisorOptions = { id: 'agents', clock, random, maxRestarts: 1, periodMs: 5000, children: [world.spec('w1'), world.spec('w2')], ...agents };
  const supervisor = createSupervisor({
    id: 'root',
    clock,
    random,
    strategy: 'rest_for_one',
    children: [world.spec('store'), supervisorSpec(agentOptions), world.spec('api')],
    ...root,
  });
  const transitions = recordTransitions(supervisor);
  const exits: ChildExit[] = [];
  supervisor.onExit((exit) => exits.push(exit));
  const agentSupervisor = () => supervisor.getChild('agents')!.handle as Supervisor;
  return { clock, world, root: supervisor, transitions, exits, agentSupervisor };
}

const generations = (world: ReturnType<typeof createFakeWorld>, ids: string[]) => ids.map((id) => world.current(id).startNumber);

describe('supervision tree', () => {
  it('starts depth first in order, and the nested supervisor is reachable through its child info', async () => {
    const { world, root, agentSupervisor } = tree();
    await root.start();
    assert.deepEqual(world.log, ['start store', 'start w1', 'start w2', 'start api']);
    assert.equal(root.getChild('agents')?.kind, 'supervisor');
    assert.equal(agentSupervisor().state, 'running');
    await agentSupervisor().startChild(world.spec('w3'));
    assert.equal(agentSupervisor().countChildren().running, 3);
  });

  it('stops in reverse, a nested supervisor stopping its own children before its elder siblings', async () => {
    const { world, root } = tree();
    await root.start();
    world.clearLog();
    await root.stop();
    assert.deepEqual(world.log, ['stop api', 'stop w2', 'stop w1', 'stop store']);
  });

  it('a nested supervisor that gives up is restarted fresh by its parent, with the parent strategy', async () => {
    const { clock, world, root, transitions, exits, agentSupervisor } = tree();
    await root.start();
    const first = agentSupervisor();
    world.current('w1').crash();
    await clock.advance(100);
    world.current('w1').crash('again');
    await clock.settle();
    assert.equal(first.state, 'stopped');
    const escalation = transitions.find((t) => t.id === 'agents' && t.to === 'restarting');
    assert.deepEqual([escalation?.reason, escalation?.attempt, escalation?.delayMs], ['reached_max_restart_intensity', 1, 100]);
    await clock.advance(100);
    assert.notEqual(agentSupervisor(), first);
    assert.equal(agentSupervisor().state, 'running');
    // rest_for_one: the API restarted after the agents; the store never noticed.
    assert.deepEqual(generations(world, ['store', 'w1', 'w2', 'api']), [1, 3, 2, 2]);
    assert.deepEqual(exits, []);
  });

  it('escalation reaches the root, which gives up in turn', async () => {
    const { clock, world, root, exits } = tree({}, { maxRestarts: 0 });
    await root.start();
    world.current('w1').crash();
    await clock.advance(100);
    world.current('w1').crash();
    await clock.settle();
    assert.equal(root.state, 'stopped');
    assert.deepEqual([exits[0]?.kind, exits[0]?.reason], ['abnormal', 'reached_max_restart_intensity']);
    assert.equal(world.current('store').stopCalls.length, 1);
    assert.equal(clock.pendingTimers(), 0);
  });

  it('an agent supervisor with per-child intensity contains a failing agent', async () => {
    const { clock, world, root, transitions, agentSupervisor } = tree({ intensityScope: 'child' });
    await root.start();
    for (let i = 0; i < 5; i += 1) {
      world.current('w1').crash();
      await clock.advance(1000);
    }
    assert.equal(agentSupervisor().getChild('w1')?.state, 'failed');
    assert.equal(agentSupervisor().getChild('w2')?.state, 'running');
    assert.equal(transitions.filter((t) => t.from !== null && t.from !== 'starting').length, 0);
    assert.deepEqual(generations(world, ['store', 'w1', 'w2', 'api']), [1, 2, 1, 1]);
    assert.equal(root.state, 'running');
  });

  it('a parent killing a nested supervisor kills its children', async () => {
    const { world, root, agentSupervisor } = tree({ children: [createFakeWorld().spec('x', { stop: 'hang', shutdownTimeoutMs: Infinity })] });
    await root.start();
    const nested = agentSupervisor();
    const stopped = root.stop();
    await nested.kill('parent_timeout');
    await stopped;
    assert.equal(nested.state, 'stopped');
    assert.deepEqual(world.current('store').stopCalls, ['shutdown']);
  });
});
