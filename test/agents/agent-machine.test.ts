/**
 * One agent's lifecycle machine with the work it invokes (agent-runtime.ts
 * over a real executor pool, real WASM) and no supervisor: the test takes the
 * supervisor's part, starting the agent and sending its decisions, and reads
 * what the machine reports. Every delay (startup, idle, shutdown) runs on a
 * simulated clock.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createSimulatedClock, type ChildExit, type ChildHandle, type SimulatedClock, type StartReason } from '../../supervisors/index.js';
import { AgentRuntime, type AgentEnvironment } from '../../src/agents/agent-runtime.js';
import { createMemoryGuard } from '../../src/agents/memory-guard.js';
import type { LifecycleState } from '../../src/agents/agent-machine.js';
import { createAdmission } from '../../src/sandbox/admission.js';
import type { AdmittedModule, ExecutionResult, ExecutorPool } from '../../src/sandbox/types.js';
import { createAgentLogLimiter } from '../../src/telemetry/agent-log-limiter.js';
import { createMetrics } from '../../src/telemetry/metrics.js';
import { MiB, testPool } from '../sandbox/sandbox-fixtures.js';
import { CRASHABLE_COUNTER, INITIALIZE_TRAPS, START_NEVER_RETURNS, burner, compile } from './agent-wat.js';
import { TEST_TIMEOUT_MS, captureLogger, type LogRecord } from './agent-fixtures.js';

const STARTUP_MS = 2_000;
const IDLE_MS = 60_000;
const SHUTDOWN_MS = 5_000;
const FUEL = 1_000_000_000_000n;

let pool: ExecutorPool;
let modules: Record<'counter' | 'traps' | 'neverStarts' | 'burner', AdmittedModule>;

before(async () => {
  // Its watchdog stands on a clock of its own, so no run of these tests is ever stopped by it.
  pool = testPool({ fuelPerExecution: FUEL, wasmMemoryLimitBytes: 256 * MiB });
  const admission = createAdmission({ maxModuleSize: 1 << 20, maxMemoryPages: 16, lowerMemoryMaximum: false, fuelPerExecution: FUEL });
  const admit = async (source: string) => admission.admit(await compile(source));
  modules = { counter: await admit(CRASHABLE_COUNTER), traps: await admit(INITIALIZE_TRAPS), neverStarts: await admit(START_NEVER_RETURNS), burner: await admit(burner(50_000_000)) };
});

after(() => pool.close());

interface Subject {
  agent: AgentRuntime;
  clock: SimulatedClock;
  /** Every visible transition, `from>to:reason`. */
  seen: string[];
  /** Starts it as the supervisor would; the handle, or the exit a failed start stands for. */
  start(reason?: StartReason, signal?: AbortSignal): Promise<ChildHandle | ChildExit>;
  /** A message through the agent's current instance, as the dispatcher sends it. */
  run(content?: string): Promise<ExecutionResult>;
  /** Resolves at the transition into `state` (at once if the agent is in it). */
  reached(state: LifecycleState): Promise<void>;
  readonly state: LifecycleState;
}

function subject(module: keyof typeof modules, origin: 'deploy' | 'restore' = 'deploy', idleTimeoutMs = IDLE_MS, on: ExecutorPool = pool): Subject {
  const clock = createSimulatedClock();
  const logs: LogRecord[] = [];
  const log = captureLogger(logs);
  const seen: string[] = [];
  const waiting: Array<{ state: LifecycleState; resolve(): void }> = [];
  const transition = (to: LifecycleState) => {
    for (const w of waiting.filter((w) => w.state === to)) w.resolve();
  };
  const env: AgentEnvironment = {
    pool: on,
    clock,
    machineClock: clock,
    log,
    metrics: createMetrics({ clock, nodeMetrics: false }),
    agentLog: createAgentLogLimiter(log, { clock }),
    hooks: {
      transition: (_agent, from, to, reason) => {
        seen.push(`${from}>${to}:${reason}`);
        transition(to);
      },
      ready: () => undefined,
    },
    idleTimeoutMs,
    startupTimeoutMs: STARTUP_MS,
    shutdownTimeoutMs: SHUTDOWN_MS,
    mailboxSize: 10,
    mailboxBytesLimit: MiB,
    memory: createMemoryGuard({ maxQueuedBytes: MiB, pressureRatio: 1 }),
    cpuQuotaMillicores: 0,
    maxMemoryBytes: MiB,
  };
  const record = { agentId: `agent-${module}`, name: module, capabilities: [], resources: { memoryLimit: MiB, cpuShares: 1024 }, desiredState: 'running' as const, nodeId: 'n', createdAt: 0, moduleSha256: modules[module].sha256, moduleSize: 1, moduleVersion: 1, previousModule: null, restartCount: 0, updatedAt: 0 };
  const agent = new AgentRuntime(env, record, modules[module], origin);
  return {
    agent,
    clock,
    seen,
    start: (reason = 'start', signal = new AbortController().signal) =>
      agent.start({ id: agent.id, restarts: 0, reason, signal }).then(
        (handle) => handle,
        (error: { exit: ChildExit }) => error.exit,
      ),
    run: (content = 'hi') =>
      new Promise<ExecutionResult>((resolve) => pool.execute(agent.instance!, new TextEncoder().encode(JSON.stringify({ message_id: 'm', sender: 'client:t', receiver: agent.id, message_type: 'request', content })), resolve)),
    reached: (state) => (agent.state === state ? Promise.resolve() : new Promise((resolve) => waiting.push({ state, resolve }))),
    get state() {
      return agent.state;
    },
  };
}

const isHandle = (value: ChildHandle | ChildExit): value is ChildHandle => 'onExit' in value;

describe('agent machine', { timeout: TEST_TIMEOUT_MS }, () => {
  it('starts when the supervisor starts it, with the reason of its origin, and stops draining nothing', async () => {
    const s = subject('counter');
    assert.deepEqual(s.seen, [], 'created: nothing visible until the first start');
    const handle = await s.start();
    assert.ok(isHandle(handle));
    assert.ok(s.agent.instance !== undefined);
    assert.ok(s.agent.memoryBytes > 0);
    await handle.stop('terminated');
    assert.deepEqual(s.seen, ['null>starting:deploy', 'starting>running:started', 'running>stopping:terminated', 'stopping>stopped:terminated']);
    assert.equal(s.agent.held, undefined, 'the instance is released');
  });

  it('a crash reports the exit; the restart decision, then a start, bring a fresh instance', async () => {
    const s = subject('counter');
    const handle = await s.start();
    assert.ok(isHandle(handle));
    const exits: ChildExit[] = [];
    handle.onExit((exit) => exits.push(exit));
    assert.equal((await s.run()).ok, true);
    const first = s.agent.instance!;
    assert.equal((await s.run('boom!')).ok, false);
    s.agent.crash(first, 'trap: unreachable');
    assert.deepEqual(exits, [{ kind: 'abnormal', reason: 'trap: unreachable' }]);
    assert.equal(s.state, 'running', 'exited is not visible: it waits for the decision');
    s.agent.decide({ type: 'restart', reason: 'trap: unreachable', attempt: 1, delayMs: 100 });
    assert.equal(s.state, 'restarting');
    s.agent.crash(first, 'worker_lost');
    assert.equal(s.state, 'restarting', 'a crash of an instance it no longer holds changes nothing');
    assert.ok(isHandle(await s.start('restart')));
    assert.notEqual(s.agent.instance, first);
    const fresh = await s.run();
    assert.ok(fresh.ok && fresh.stdout[0]?.includes('"1"'), 'state lost with the old instance');
    assert.deepEqual(s.seen.slice(2), ['running>restarting:trap: unreachable', 'restarting>starting:restart', 'starting>running:started']);
    await s.agent.stop('shutdown');
  });

  it('give_up makes it failed; an operator restart (restart_requested) starts it again', async () => {
    const s = subject('counter');
    await s.start();
    s.agent.crash(s.agent.instance!, 'trap: x');
    s.agent.decide({ type: 'give_up', reason: 'reached_max_restart_intensity: trap: x' });
    assert.deepEqual(s.seen.at(-1), 'running>failed:reached_max_restart_intensity: trap: x');
    assert.ok(isHandle(await s.start('restart_requested')));
    assert.equal(s.seen.at(-2), 'failed>starting:restart_requested');
    await s.agent.stop('undeployed');
  });

  it('an operator restart of a running agent: stopped, then started again from a fresh instance; a later stop waits anew', async () => {
    const s = subject('counter');
    const handle = await s.start();
    assert.ok(isHandle(handle));
    await s.run();
    await handle.stop('terminated');
    assert.equal(s.state, 'stopped');
    assert.ok(isHandle(await s.start('restart_requested')));
    assert.equal(s.seen.at(-2), 'stopped>starting:restart_requested');
    const fresh = await s.run();
    assert.ok(fresh.ok && fresh.stdout[0]?.includes('"1"'), 'a fresh instance');
    await s.agent.stop('undeployed');
    assert.equal(s.seen.at(-1), 'stopping>stopped:undeployed');
  });

  it('a failed start rejects the supervisor with its reason; a stop decision ends a deploy, and fails a restored agent', async () => {
    const deployed = subject('traps');
    const failure = await deployed.start();
    assert.ok(!isHandle(failure));
    assert.match(failure.reason, /^start_failed: /);
    deployed.agent.decide({ type: 'stop', reason: failure.reason });
    assert.equal(deployed.seen.at(-1), `starting>stopped:${failure.reason}`);

    const restored = subject('traps', 'restore');
    const again = await restored.start();
    assert.ok(!isHandle(again));
    restored.agent.decide({ type: 'stop', reason: again.reason });
    assert.equal(restored.seen.at(-1), `starting>failed:restore_failed: ${again.reason}`);
    restored.agent.fail('ignored: failed takes stop or start only');
    await restored.agent.stop('undeployed');
    assert.equal(restored.seen.at(-1), 'failed>stopped:undeployed');
  });

  it('a start that overruns agent_startup_timeout on the clock fails with start_timeout', async () => {
    // A pool of its own: the start spins in its worker until the pool closes.
    const spinning = testPool({ fuelPerExecution: FUEL });
    const s = subject('neverStarts', 'deploy', IDLE_MS, spinning);
    const starting = s.start();
    await s.clock.advance(STARTUP_MS - 1);
    assert.equal(s.state, 'starting');
    await s.clock.advance(1);
    const failure = await starting;
    assert.ok(!isHandle(failure));
    assert.deepEqual(failure, { kind: 'abnormal', reason: 'start_timeout' });
    s.agent.decide({ type: 'stop', reason: 'start_timeout' });
    assert.equal(s.seen.at(-1), 'starting>stopped:start_timeout');
    await spinning.close();
  });

  it('a stop asked during the start (the start signal aborts) stops it without waiting for the start', async () => {
    const spinning = testPool({ fuelPerExecution: FUEL });
    const s = subject('neverStarts', 'deploy', IDLE_MS, spinning);
    const abort = new AbortController();
    const starting = s.start('start', abort.signal);
    abort.abort('shutdown');
    const failure = await starting;
    assert.ok(!isHandle(failure));
    assert.deepEqual(s.seen, ['null>starting:deploy', 'starting>stopping:shutdown', 'stopping>stopped:shutdown']);
    await spinning.close();
  });

  it('hibernates after agent_idle_timeout without messages, lazily, and wakes with its state', async () => {
    const s = subject('counter');
    await s.start();
    assert.equal((await s.run()).ok, true);
    s.agent.lastActiveAt = s.clock.now();
    await s.clock.advance(IDLE_MS / 2);
    // A message half-way: the dispatcher marks the agent active; the timer is not touched.
    s.agent.lastActiveAt = s.clock.now();
    await s.clock.advance(IDLE_MS / 2);
    assert.equal(s.state, 'running', 're-armed for what is left');
    const hibernated = s.reached('hibernated');
    await s.clock.advance(IDLE_MS / 2);
    await hibernated;
    assert.equal(s.agent.instance, undefined);
    assert.equal(s.agent.memoryBytes, 65_536, 'the snapshot is accounted');
    const awake = s.reached('running');
    s.agent.wake();
    await awake;
    const woken = await s.run();
    assert.ok(woken.ok && woken.stdout[0]?.includes('"2"'), 'state intact');
    assert.deepEqual(s.seen.slice(-2), ['running>hibernated:idle', 'hibernated>running:message']);
    await s.agent.stop('shutdown');
  });

  it('never hibernates with agent_idle_timeout 0, and leaves no timer behind', async () => {
    const s = subject('counter', 'deploy', 0);
    await s.start();
    await s.clock.advance(10 * IDLE_MS);
    assert.equal(s.state, 'running');
    assert.equal(s.clock.pendingTimers(), 0);
    await s.agent.stop('shutdown');
  });

  it('a stop drains the execution in flight; one still running at agent_shutdown_timeout is cut', async () => {
    const s = subject('burner');
    await s.start();
    const drained = s.run();
    const stopping = s.agent.stop('terminated');
    assert.equal(s.state, 'stopping');
    assert.equal((await drained).ok, true);
    await stopping;
    assert.equal(s.seen.at(-1), 'stopping>stopped:terminated');

    const cut = subject('burner');
    await cut.start();
    const running = cut.run();
    const cutting = cut.agent.stop('terminated');
    await cut.clock.advance(SHUTDOWN_MS);
    await cutting;
    assert.equal(cut.seen.at(-1), 'stopping>stopped:killed: shutdown_timeout');
    assert.equal(cut.agent.held, undefined, 'released: the result that comes is no longer the agent’s');
    await running;
  });
});
