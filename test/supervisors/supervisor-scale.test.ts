import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createFixedRandom, createSimulatedClock, createSupervisor, type ChildHandle, type ChildSpec, type ChildTransition } from '../../supervisors/index.js';
import { abnormalExit, createExitSignal } from '../../supervisors/index.js';

const AGENTS = 10_000;

/** The leanest child: what an agent handle costs the supervisor, nothing more. */
function agentSpec(id: string, handles: Map<string, ReturnType<typeof createExitSignal>>, starts: { count: number }): ChildSpec {
  return {
    id,
    restart: 'permanent',
    start: (): ChildHandle => {
      starts.count += 1;
      const signal = createExitSignal();
      handles.set(id, signal);
      return { onExit: signal.onExit, stop: () => void signal.exit({ kind: 'normal', reason: 'shutdown' }), kill: () => {} };
    },
  };
}

describe('agent supervisor at scale', () => {
  it(`${AGENTS} dynamic children: one crash restarts only that child; many crashes spread by jitter; concurrent stop`, async () => {
    const clock = createSimulatedClock();
    const supervisor = createSupervisor({ id: 'agents', clock, random: createFixedRandom(0.1, 0.5, 0.9), intensityScope: 'child', shutdownOrder: 'concurrent' });
    const transitions: ChildTransition[] = [];
    supervisor.on((t) => transitions.push(t));
    await supervisor.start();
    const handles = new Map<string, ReturnType<typeof createExitSignal>>();
    const starts = { count: 0 };

    await Promise.all(Array.from({ length: AGENTS }, (_, i) => supervisor.startChild(agentSpec(`agent-${i}`, handles, starts))));
    assert.equal(starts.count, AGENTS);
    assert.deepEqual(supervisor.countChildren(), { specs: AGENTS, starting: 0, running: AGENTS, restarting: 0, stopping: 0, stopped: 0, failed: 0 });
    assert.equal(transitions.length, 2 * AGENTS);

    transitions.length = 0;
    handles.get('agent-4242')!.exit(abnormalExit('trap'));
    assert.equal(supervisor.countChildren().restarting, 1);
    await clock.advance(200);
    assert.equal(starts.count, AGENTS + 1);
    assert.deepEqual(transitions.map((t) => `${t.id} ${t.to}`), ['agent-4242 restarting', 'agent-4242 starting', 'agent-4242 running']);

    // A watchdog killing a worker takes many agents down at once: jitter spreads their restarts.
    transitions.length = 0;
    for (let i = 0; i < 300; i += 1) handles.get(`agent-${i}`)!.exit(abnormalExit('worker_lost'));
    const delays = new Set(transitions.map((t) => t.delayMs));
    assert.deepEqual([...delays].sort((a, b) => a! - b!), [84, 100, 116]);
    await clock.advance(120);
    assert.equal(starts.count, AGENTS + 301);
    assert.equal(supervisor.countChildren().running, AGENTS);
    assert.equal(clock.pendingTimers(), 0);

    await supervisor.stop();
    assert.deepEqual(supervisor.countChildren(), { specs: AGENTS, starting: 0, running: 0, restarting: 0, stopping: 0, stopped: AGENTS, failed: 0 });
  });
});
