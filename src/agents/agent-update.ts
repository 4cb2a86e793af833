/**
 * An operator's update of one agent (`UpdateAgent`): a new module, new
 * capabilities or resources, or all three.
 *
 * - A running or hibernated agent moves to the new module at a message
 *   boundary inside its lifecycle (agent-upgrade.ts): the message in flight
 *   finishes on the old module, the ones after it run on the new one. With
 *   `keepState` its memory and mutable globals come along if the layouts
 *   agree (sandbox/upgrade-compat.ts), else FAILED_PRECONDITION and nothing
 *   changes. Then the store records the new module as the current version
 *   and the old one as the previous version, and the rollback window opens
 *   (agent-canary.ts).
 * - A failed or restarting agent (how one fixes a crashing module) has no
 *   state to keep: it restarts on the new module, as RestartAgent does, and
 *   has no rollback window, since what it ran before crashed anyway.
 * - Capabilities and resources alone change the record: capabilities and
 *   `cpu_shares` count from the next message, `memory_limit` from the next
 *   instance (a restart, a wake, an update of the module).
 *
 * One change at a time per agent: an update or restart already under way
 * makes another ABORTED, so of two concurrent updates one wins.
 *
 * A crash within the window (`rollBack`) brings the previous module back
 * with the state it had at the update: its restart instantiates that module
 * and restores that state. The rollback is logged, published as a lifecycle
 * event (`rolled_back: …`), counted in `svc_agent_rollbacks_total` and
 * written to the store (the versions swap: current ⇄ previous).
 */
import type { Clock, Supervisor } from '../../supervisors/index.js';
import type { RollbackWindow } from '../config/rollback-window.js';
import { SvcError } from '../errors/svc-error.js';
import type { AdmittedModule, InstanceSnapshot } from '../sandbox/types.js';
import { globalsIncompatibility } from '../sandbox/upgrade-compat.js';
import type { AgentResources, AgentRecord, ModuleChange, Store } from '../store/types.js';
import type { Logger } from '../telemetry/logger.js';
import type { Metrics } from '../telemetry/metrics.js';
import { endCanary, startCanary, type PreviousVersion } from './agent-canary.js';
import { fromStoreError } from './agent-errors.js';
import { QUARANTINED, type LifecycleState } from './agent-machine.js';
import { restartAgent } from './agent-restart.js';
import type { AgentRuntime } from './agent-runtime.js';
import { incompatible, type UpgradeOutcome } from './agent-upgrade.js';
import type { LifecycleEvents } from './lifecycle-events.js';

/** An update as the host takes it: the module already admitted, the request's fields checked. */
export interface AgentUpdate {
  module?: { bytes: Uint8Array; admitted: AdmittedModule };
  capabilities?: readonly string[];
  resources?: AgentResources;
  keepState: boolean;
  rollbackWindow: RollbackWindow;
}

export interface AgentUpdaterOptions {
  store: Store;
  supervisor: Supervisor;
  lifecycle: LifecycleEvents;
  log: Logger;
  metrics: Metrics;
  clock: Clock;
  /** Counts an operator's restart in `svc_agent_restarts_total`. */
  countRestart: () => void;
}

export interface AgentUpdater {
  /** Resolves once the agent runs the update; rejects leaving it as it was. */
  update(agent: AgentRuntime, update: AgentUpdate): Promise<void>;
  /** Every state change of an agent: a crash within a rollback window rolls it back (a quarantine is no crash). */
  transition(agent: AgentRuntime, to: LifecycleState, reason: string): void;
}

const LIVE: ReadonlySet<LifecycleState> = new Set(['running', 'hibernated']);
const DOWN: ReadonlySet<LifecycleState> = new Set(['failed', 'restarting']);

const versionOf = (record: AgentRecord) => `version ${record.moduleVersion} (sha256 ${record.moduleSha256.slice(0, 12)})`;

function recordFields(record: AgentRecord): PreviousVersion['record'] {
  const { moduleSha256, moduleSize, moduleVersion, previousModule, capabilities, resources } = record;
  return { moduleSha256, moduleSize, moduleVersion, previousModule, capabilities: [...capabilities], resources: { ...resources } };
}

/** Refusals that need no change to be tried: the agent's state and the layouts. */
function precheck(agent: AgentRuntime, update: AgentUpdate, busy: ReadonlySet<AgentRuntime>): void {
  const meta = { agent_id: agent.id };
  if (busy.has(agent)) throw new SvcError('ABORTED', `agent ${agent.id} is being updated; retry once that update is done`, { ...meta, reason: 'update_in_progress' });
  if (agent.restartRequested) throw new SvcError('ABORTED', `agent ${agent.id} is restarting on request; retry once it runs`, { ...meta, reason: 'restart_in_progress' });
  if (update.module === undefined) return;
  if (!LIVE.has(agent.state) && !DOWN.has(agent.state)) {
    throw new SvcError('UNAVAILABLE', `agent ${agent.id} is ${agent.state}; update it once it runs`, { ...meta, reason: `agent_${agent.state}` });
  }
  if (!update.keepState) return;
  if (DOWN.has(agent.state) || agent.admitted === undefined) {
    throw new SvcError('FAILED_PRECONDITION', `agent ${agent.id} is ${agent.state}: its state is gone, so there is none to keep; update it without keep_state`, { ...meta, reason: 'no_state' });
  }
  const problem = globalsIncompatibility(agent.admitted.info, update.module.admitted.info);
  if (problem !== null) throw incompatible(agent.id, problem);
}

export function createAgentUpdater(options: AgentUpdaterOptions): AgentUpdater {
  const { store, supervisor, lifecycle, log, metrics, clock, countRestart } = options;
  const busy = new Set<AgentRuntime>();
  // Both series exist from the start: dashboards and alerts see 0, not no data, before the first update.
  for (const status of ['success', 'error']) metrics.agentUpdates.inc({ status }, 0);

  function write(agent: AgentRuntime, change: ModuleChange): void {
    try {
      Object.assign(agent.record, store.changeModule(agent.id, change));
    } catch (error) {
      throw fromStoreError(error);
    }
  }

  /** The live agent's move to the new module, inside its machine. */
  function swap(agent: AgentRuntime, admitted: AdmittedModule, update: AgentUpdate): Promise<{ previous: AdmittedModule; snapshot: InstanceSnapshot | undefined }> {
    const memoryLimit = update.resources?.memoryLimit ?? agent.record.resources.memoryLimit;
    return new Promise((resolve, reject) => {
      const settle = (outcome: UpgradeOutcome) => (outcome.ok ? resolve(outcome) : reject(outcome.error));
      const plan = { admitted, keepState: update.keepState, memoryLimitBytes: Math.min(memoryLimit, agent.env.maxMemoryBytes), settle };
      if (!agent.beginUpgrade(plan)) reject(new SvcError('UNAVAILABLE', `agent ${agent.id} is ${agent.state}; update it once it runs`, { agent_id: agent.id, reason: `agent_${agent.state}` }));
    });
  }

  async function replaceModule(agent: AgentRuntime, module: NonNullable<AgentUpdate['module']>, update: AgentUpdate): Promise<void> {
    const before = recordFields(agent.record);
    const change: ModuleChange = {
      module: { sha256: module.admitted.sha256, version: before.moduleVersion + 1, bytes: module.bytes },
      previousModule: { sha256: before.moduleSha256, version: before.moduleVersion },
      ...(update.capabilities === undefined ? {} : { capabilities: update.capabilities }),
      ...(update.resources === undefined ? {} : { resources: update.resources }),
      updatedAt: Date.now(),
    };
    if (DOWN.has(agent.state)) {
      const previous = agent.admitted;
      agent.admitted = module.admitted;
      try {
        endCanary(agent, clock);
        await restartAgent(supervisor, agent, countRestart);
        write(agent, change);
      } catch (error) {
        agent.admitted = previous;
        throw error;
      }
      return;
    }
    const { previous, snapshot } = await swap(agent, module.admitted, update);
    try {
      write(agent, change);
    } catch (error) {
      // The store still names the old module: the agent goes back to it and its state, by a restart.
      agent.admitted = previous;
      agent.pendingRestore = snapshot;
      void restartAgent(supervisor, agent, countRestart).catch((err: unknown) => log.error({ agent_id: agent.id, err }, 'could not restart an agent whose update was not stored'));
      throw error;
    }
    startCanary(agent, { admitted: previous, snapshot, record: before }, update.rollbackWindow, clock);
  }

  function rollBack(agent: AgentRuntime, to: LifecycleState): void {
    const previous = agent.canary!.previous;
    endCanary(agent, clock);
    const crashed = { sha256: agent.record.moduleSha256, version: agent.record.moduleVersion };
    const left = versionOf(agent.record);
    agent.admitted = previous.admitted;
    agent.pendingRestore = previous.snapshot;
    try {
      write(agent, { module: { sha256: previous.record.moduleSha256, version: previous.record.moduleVersion }, previousModule: crashed, capabilities: previous.record.capabilities, resources: previous.record.resources, updatedAt: Date.now() });
    } catch (err) {
      // Running the previous module matters more than recording it; a server restart would bring the stored one back.
      log.error({ agent_id: agent.id, err }, 'could not store the rollback of an agent');
      Object.assign(agent.record, previous.record, { previousModule: { ...crashed, size: agent.record.moduleSize } });
    }
    metrics.agentRollbacks.inc();
    const reason = `rolled_back: ${left} crashed within its rollback window; ${versionOf(agent.record)} and its state are back`;
    log.warn({ agent_id: agent.id, from_version: crashed.version, to_version: agent.record.moduleVersion }, 'agent rolled back');
    lifecycle.transition(agent, to, to, reason);
    // A failed agent gets no more restarts from its supervisor: the previous module needs one.
    if (to === 'failed') void restartAgent(supervisor, agent, countRestart).catch((err: unknown) => log.error({ agent_id: agent.id, err }, 'could not restart a rolled-back agent'));
  }

  return {
    async update(agent, update) {
      precheck(agent, update, busy);
      busy.add(agent);
      try {
        const { module } = update;
        if (module === undefined) {
          const { capabilities, resources } = update;
          write(agent, { ...(capabilities === undefined ? {} : { capabilities }), ...(resources === undefined ? {} : { resources }), updatedAt: Date.now() });
          return;
        }
        const from = versionOf(agent.record);
        await replaceModule(agent, module, update);
        metrics.agentUpdates.inc({ status: 'success' });
        log.info({ agent_id: agent.id, module_version: agent.record.moduleVersion, module_sha256: agent.record.moduleSha256, keep_state: update.keepState }, 'agent updated');
        lifecycle.transition(agent, agent.state, agent.state, `updated: ${from} to ${versionOf(agent.record)}${update.keepState ? ', state kept' : ''}`);
      } catch (error) {
        if (update.module !== undefined) metrics.agentUpdates.inc({ status: 'error' });
        throw error;
      } finally {
        busy.delete(agent);
      }
    },

    transition(agent, to, reason) {
      if (agent.canary !== undefined && DOWN.has(to) && reason !== QUARANTINED) rollBack(agent, to);
    },
  };
}
