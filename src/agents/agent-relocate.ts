/**
 * Moving a running agent to another executor worker, beside the agents it
 * talks to (co-location.ts decides when): at a message boundary its memory
 * and globals are snapshotted, restored into a new instance on that worker,
 * and the old instance is released. Messages wait in its mailbox meanwhile
 * (the machine is in `running.relocating`, agent-machine.ts). Any failure
 * leaves the agent on its old instance.
 */
import { SvcError } from '../errors/svc-error.js';
import type { AdmittedModule, ExecutorPool, InstanceHandle } from '../sandbox/types.js';

/** The agent as a move sees it (agent-runtime.ts). */
export interface Relocatable {
  readonly id: string;
  readonly record: { readonly name: string };
  readonly admitted: AdmittedModule | undefined;
  readonly memoryLimitBytes: number;
  inFlightDone(): Promise<void>;
}

export async function relocate(
  agent: Relocatable,
  pool: ExecutorPool,
  onLost: (instance: InstanceHandle) => void,
  instance: InstanceHandle,
  workerId: number,
  signal: AbortSignal,
): Promise<InstanceHandle> {
  const interrupted = () => new SvcError('ABORTED', `the move of agent ${agent.id} was interrupted`, { agent_id: agent.id });
  await agent.inFlightDone();
  if (signal.aborted || agent.admitted === undefined) throw interrupted();
  const snapshot = await pool.snapshot(instance);
  if (signal.aborted) throw interrupted();
  const names = [agent.id, agent.record.name];
  const placement = await pool.instantiate(agent.admitted, { label: agent.id, names, memoryLimitBytes: agent.memoryLimitBytes, onLost, snapshot, workerId });
  if (signal.aborted) {
    void pool.release(placement.instance);
    throw interrupted();
  }
  void pool.release(instance);
  return placement.instance;
}
