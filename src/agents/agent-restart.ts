/**
 * An operator's restart of one agent (`RestartAgent`), OTP's way: the agent
 * supervisor's `terminateChild`, then its `restartChild`, which also clears
 * the agent's restart intensity. The machine takes both as it takes any
 * stop and start (`stopped ─start─> starting`, `failed ─start─> starting`),
 * so the timeline shows the stop and the new start with reason
 * `restart_requested`. The new instance is fresh: linear memory is not kept.
 *
 * Messages sent meanwhile wait in the mailbox (`restartRequested`), and the
 * one in flight finishes first (or is cut at `agent_shutdown_timeout`).
 * Concurrent restarts of one agent share one.
 */
import { SupervisorError, type Supervisor } from '../../supervisors/index.js';
import { SvcError } from '../errors/svc-error.js';
import { fromStartFailure } from './agent-errors.js';
import type { AgentRuntime } from './agent-runtime.js';

const inProgress = new WeakMap<AgentRuntime, Promise<void>>();

async function run(supervisor: Supervisor, agent: AgentRuntime, counted: () => void): Promise<void> {
  agent.restartRequested = true;
  counted();
  try {
    await supervisor.terminateChild(agent.id);
    await supervisor.restartChild(agent.id);
  } catch (error) {
    if (error instanceof SupervisorError && error.code === 'not_found') throw new SvcError('NOT_FOUND', `agent ${agent.id} not found`, { agent_id: agent.id });
    throw fromStartFailure(error, agent.id);
  } finally {
    agent.restartRequested = false;
  }
}

/**
 * Resolves once the agent runs again; rejects with the start's error (the
 * agent is then failed or restarting, as its supervisor decided). `counted`
 * is called once per restart begun (`svc_agent_restarts_total`).
 */
export function restartAgent(supervisor: Supervisor, agent: AgentRuntime, counted: () => void): Promise<void> {
  const running = inProgress.get(agent);
  if (running !== undefined) return running;
  if (agent.admitted === undefined) {
    return Promise.reject(
      new SvcError('INVALID_MODULE', `the stored module of agent ${agent.id} no longer passes admission; undeploy it and deploy a module that does`, {
        agent_id: agent.id,
        reason: 'module_not_admitted',
      }),
    );
  }
  if (agent.state === 'starting') {
    return Promise.reject(new SvcError('UNAVAILABLE', `agent ${agent.id} is starting; restart it once it runs`, { agent_id: agent.id, reason: 'agent_starting' }));
  }
  const restart = run(supervisor, agent, counted).finally(() => inProgress.delete(agent));
  inProgress.set(agent, restart);
  return restart;
}
