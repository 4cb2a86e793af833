/**
 * The work of one update inside an agent's lifecycle (the machine's
 * `upgrading` states, agent-machine.ts): at a message boundary (the message
 * in flight finishes first; nothing is dispatched meanwhile) the agent's
 * state is taken, checked against the new module when it is to be kept
 * (sandbox/upgrade-compat.ts), and a new instance of the new module is made
 * with it, running `_upgrade` after the restore. Until that instance exists
 * the old one is untouched, so any failure leaves the agent as it was.
 *
 * The state taken is also what a rollback brings back (agent-canary.ts),
 * whether or not the update keeps it.
 */
import { SvcError, isSvcError } from '../errors/svc-error.js';
import type { AdmittedModule, ExecutorPool, InstanceHandle, InstanceSnapshot, Placement } from '../sandbox/types.js';
import { memoryIncompatibility, type Incompatibility } from '../sandbox/upgrade-compat.js';

export type UpgradeOutcome = { ok: true; previous: AdmittedModule; snapshot: InstanceSnapshot | undefined } | { ok: false; error: unknown };

/** One update, as agent-update.ts hands it to the agent's machine. */
export interface UpgradePlan {
  readonly admitted: AdmittedModule;
  readonly keepState: boolean;
  /** The limit the new instance runs under (the update may change `memory_limit`). */
  readonly memoryLimitBytes: number;
  /** Called once, with the new module running or with why not. */
  settle(outcome: UpgradeOutcome): void;
}

export interface UpgradeStep {
  readonly agentId: string;
  readonly pool: ExecutorPool;
  readonly plan: UpgradePlan;
  readonly onLost: (instance: InstanceHandle) => void;
  /** Resolves once no message of the agent is in flight. */
  inFlight(): Promise<void>;
}

export function incompatible(agentId: string, problem: Incompatibility): SvcError {
  const { reason, message, ...detail } = problem;
  const metadata: Record<string, string> = { agent_id: agentId, reason };
  for (const [key, value] of Object.entries(detail)) metadata[key] = String(value);
  return new SvcError('FAILED_PRECONDITION', `the agent's state cannot move to the new module: ${message}`, metadata);
}

const interrupted = (agentId: string) =>
  new SvcError('ABORTED', `agent ${agentId} crashed or stopped during the update; it keeps its module`, { agent_id: agentId, reason: 'agent_interrupted' });

/** The new module could not start on the state (a trap in `_upgrade`, fuel, memory): the pool's code, said as an update's failure. */
function startFailure(agentId: string, error: unknown): SvcError {
  if (!isSvcError(error)) return new SvcError('INTERNAL', 'internal error', { agent_id: agentId });
  const reason = error.metadata['reason'] ?? 'start_failed';
  return new SvcError(error.code, `the new module failed to start: ${error.message}; the agent keeps its module`, { ...error.metadata, agent_id: agentId, reason: 'upgrade_failed', failure: reason });
}

/** The agent as an update changes it (agent-runtime.ts). */
export interface UpgradeTarget {
  readonly id: string;
  readonly env: { readonly pool: ExecutorPool; readonly agentLog: { write(agentId: string, line: string): void } };
  admitted: AdmittedModule | undefined;
  upgradePlan: UpgradePlan | undefined;
  setMemory(bytes: number): void;
  inFlightDone(): Promise<void>;
}

/** The machine's `upgrade` work: the new instance, with the old one released and the plan settled either way. */
export async function runUpgrade(
  agent: UpgradeTarget,
  onLost: (instance: InstanceHandle) => void,
  instance: InstanceHandle | undefined,
  snapshot: InstanceSnapshot | undefined,
  signal: AbortSignal,
): Promise<InstanceHandle> {
  const plan = agent.upgradePlan!;
  agent.upgradePlan = undefined;
  const { pool, agentLog } = agent.env;
  try {
    const { placement, state } = await moveToModule({ agentId: agent.id, pool, plan, onLost, inFlight: () => agent.inFlightDone() }, instance, snapshot, signal);
    if (instance !== undefined) void pool.release(instance);
    const previous = agent.admitted!;
    agent.admitted = plan.admitted;
    for (const line of placement.log) agentLog.write(agent.id, line);
    agent.setMemory(placement.memoryBytes);
    plan.settle({ ok: true, previous, snapshot: state });
    return placement.instance;
  } catch (error) {
    plan.settle({ ok: false, error });
    throw error;
  }
}

/** The new module's instance and the state taken from the old one; the old instance is left to the caller. */
async function moveToModule(
  step: UpgradeStep,
  instance: InstanceHandle | undefined,
  hibernated: InstanceSnapshot | undefined,
  signal: AbortSignal,
): Promise<{ placement: Placement; state: InstanceSnapshot | undefined }> {
  const { agentId, pool, plan } = step;
  await step.inFlight();
  if (signal.aborted) throw interrupted(agentId);
  const state = instance === undefined ? hibernated : await pool.snapshot(instance);
  if (signal.aborted) throw interrupted(agentId);
  if (plan.keepState) {
    if (state === undefined) throw new SvcError('FAILED_PRECONDITION', `agent ${agentId} has no state to keep`, { agent_id: agentId, reason: 'no_state' });
    const problem = memoryIncompatibility(plan.admitted.info, state.memory.byteLength, plan.memoryLimitBytes);
    if (problem !== null) throw incompatible(agentId, problem);
  }
  const options = { label: agentId, memoryLimitBytes: plan.memoryLimitBytes, onLost: step.onLost };
  let placement: Placement;
  try {
    placement = await pool.instantiate(plan.admitted, plan.keepState && state !== undefined ? { ...options, snapshot: state, upgrade: true } : options);
  } catch (error) {
    throw startFailure(agentId, error);
  }
  if (signal.aborted) {
    void pool.release(placement.instance);
    throw interrupted(agentId);
  }
  return { placement, state };
}
