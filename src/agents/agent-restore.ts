/**
 * Restore at start: every stored agent whose desired state is running is
 * admitted again and started, a bounded number at a time. An agent that
 * cannot come back (its module no longer passes admission under the current
 * limits, or its start fails) is kept and listed as `failed`: it was
 * acknowledged once, so only an undeploy removes it. In a cluster, an agent
 * another node took over while this one was down is deleted instead.
 */
import type { Admission } from '../sandbox/admission.js';
import type { AdmittedModule } from '../sandbox/types.js';
import type { AgentRecord, Store } from '../store/types.js';
import type { Logger } from '../telemetry/logger.js';
import { describeError } from './exit-reason.js';

/**
 * Stored agents started at once. Instantiation runs in the workers, which
 * batch it; a few dozen in flight keep every batch full without queuing
 * thousands of starts (and their start timers) behind one another.
 */
export const RESTORE_CONCURRENCY = 32;

export interface RestoreTarget {
  readonly store: Store;
  readonly admission: Admission;
  readonly log: Logger;
  /** False once the host is stopping: restore ends early. */
  accepting(): boolean;
  /** Starts a restored agent; a failed start leaves it registered as failed. */
  start(record: AgentRecord, admitted: AdmittedModule): Promise<unknown>;
  /** Registers an agent that cannot even be admitted, as failed with `reason`. */
  fail(record: AgentRecord, reason: string): void;
  /** Whether the agent runs on another node of the cluster now: it is deleted here instead of restored. */
  movedAway?(agentId: string): boolean;
}

async function restoreOne(target: RestoreTarget, record: AgentRecord): Promise<void> {
  if (target.movedAway?.(record.agentId) === true) {
    target.store.deleteAgent(record.agentId);
    target.log.info({ agent_id: record.agentId, name: record.name }, 'stored agent runs on another node now: deleted here, not restored');
    return;
  }
  let admitted: AdmittedModule;
  try {
    const bytes = target.store.getModule(record.moduleSha256);
    if (bytes === undefined) throw new Error(`module ${record.moduleSha256} is missing from the store`);
    admitted = await target.admission.admit(bytes);
  } catch (error) {
    target.fail(record, `restore_failed: ${describeError(error)}`);
    return;
  }
  await target.start(record, admitted).catch((error: unknown) => {
    target.log.warn({ agent_id: record.agentId, err: error }, 'stored agent could not be restored');
  });
}

/** Resolves once every stored agent is running or failed; returns how many were restored. */
export async function restoreAgents(target: RestoreTarget): Promise<number> {
  const records: AgentRecord[] = [];
  for (const record of target.store.allAgents()) if (record.desiredState === 'running') records.push(record);
  let next = 0;
  const worker = async () => {
    while (target.accepting() && next < records.length) await restoreOne(target, records[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(RESTORE_CONCURRENCY, records.length) }, worker));
  return records.length;
}
