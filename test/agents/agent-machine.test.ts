/**
 * The lifecycle machine alone: its transition table, the reason it keeps,
 * and its lazy idle timer on a simulated clock.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createActor } from 'xstate';
import { createSimulatedClock, type SimulatedClock } from '../../supervisors/index.js';
import { agentMachine, LIFECYCLE_STATES, type AgentMachineEvent, type LifecycleState } from '../../src/agents/agent-machine.js';

type EventType = Exclude<AgentMachineEvent['type'], 'ACTIVE'>;
const EVENTS: readonly EventType[] = ['START', 'UP', 'RESTARTING', 'FAILED', 'STOP', 'STOPPED', 'HIBERNATED', 'WOKE'];

/** How to reach each state from the initial `starting`. */
const PATHS: Record<LifecycleState, EventType[]> = {
  starting: [],
  running: ['UP'],
  hibernated: ['UP', 'HIBERNATED'],
  restarting: ['UP', 'RESTARTING'],
  failed: ['UP', 'FAILED'],
  stopping: ['UP', 'STOP'],
  stopped: ['UP', 'STOP', 'STOPPED'],
};

/** Where each event leads from each state; an event not listed is ignored. */
const TABLE: Record<LifecycleState, Partial<Record<EventType, LifecycleState>>> = {
  starting: { UP: 'running', RESTARTING: 'restarting', FAILED: 'failed', STOP: 'stopping', STOPPED: 'stopped' },
  running: { HIBERNATED: 'hibernated', RESTARTING: 'restarting', FAILED: 'failed', STOP: 'stopping', STOPPED: 'stopped' },
  hibernated: { WOKE: 'running', RESTARTING: 'restarting', FAILED: 'failed', STOP: 'stopping', STOPPED: 'stopped' },
  restarting: { START: 'starting', FAILED: 'failed', STOPPED: 'stopped' },
  failed: { START: 'starting', STOPPED: 'stopped' },
  stopping: { STOPPED: 'stopped' },
  stopped: {},
};

function actorIn(state: LifecycleState, clock: SimulatedClock = createSimulatedClock(), idleTimeoutMs = 0) {
  const actor = createActor(agentMachine, { clock, input: { idleTimeoutMs, reason: 'deploy' } }).start();
  for (const type of PATHS[state]) actor.send({ type, reason: `to ${type}` });
  assert.equal(actor.getSnapshot().value, state);
  return actor;
}

describe('agent machine', () => {
  for (const from of LIFECYCLE_STATES) {
    it(`from ${from}: ${EVENTS.map((e) => `${e}→${TABLE[from][e] ?? '·'}`).join(' ')}`, () => {
      for (const type of EVENTS) {
        const actor = actorIn(from);
        actor.send({ type, reason: `because ${type}` });
        const to = TABLE[from][type];
        const snapshot = actor.getSnapshot();
        assert.equal(snapshot.value, to ?? from, `${from} + ${type}`);
        if (to !== undefined) assert.equal(snapshot.context.reason, `because ${type}`);
        actor.stop();
      }
    });
  }

  it('starts in starting with the reason of its origin, and stopped is final', () => {
    const actor = createActor(agentMachine, { input: { idleTimeoutMs: 0, reason: 'restore' } }).start();
    assert.deepEqual([actor.getSnapshot().value, actor.getSnapshot().context.reason], ['starting', 'restore']);
    const stopped = actorIn('stopped');
    assert.equal(stopped.getSnapshot().status, 'done');
  });

  it('emits idle once per idle period while running; ACTIVE re-arms it for the time left', async () => {
    const clock = createSimulatedClock();
    const actor = actorIn('running', clock, 1_000);
    let idle = 0;
    actor.on('idle', () => idle++);
    clock.increment(999);
    assert.equal(idle, 0);
    clock.increment(1);
    assert.equal(idle, 1);
    clock.increment(5_000);
    assert.equal(idle, 1, 'no second timer until answered');
    actor.send({ type: 'ACTIVE', delayMs: 300 });
    clock.increment(299);
    assert.equal(idle, 1);
    clock.increment(1);
    assert.equal(idle, 2);
    actor.send({ type: 'HIBERNATED', reason: 'idle' });
    actor.send({ type: 'WOKE', reason: 'message' });
    clock.increment(999);
    assert.equal(idle, 2, 'a wake arms the full timeout again');
    clock.increment(1);
    assert.equal(idle, 3);
    actor.send({ type: 'STOP', reason: 'shutdown' });
    assert.equal(clock.pendingTimers(), 0, 'leaving running cancels the timer');
    actor.stop();
  });

  it('never emits idle when hibernation is off (agent_idle_timeout 0)', () => {
    const clock = createSimulatedClock();
    const actor = actorIn('running', clock, 0);
    let idle = 0;
    actor.on('idle', () => idle++);
    clock.increment(10_000_000);
    assert.equal(idle, 0);
    actor.stop();
  });
});
