/**
 * The agent host's contract (agent-host.ts implements it): its settings,
 * what it is built from, and what AgentService, the server and the tests
 * may ask of it.
 */
import type { SendPolicy } from '../security/send-policy.js';
import type { BackoffOptions, ChildExit, Clock, Random } from '../../supervisors/index.js';
import type { MessageBus } from '../bus/bus.js';
import type { RollbackWindow } from '../config/rollback-window.js';
import type { MessageHistory } from '../bus/history.js';
import type { IdGenerator } from '../bus/message-id.js';
import type { Admission } from '../sandbox/admission.js';
import type { AdmittedModule, ExecutorPool, InstanceSnapshot } from '../sandbox/types.js';
import type { NewAgent, Store } from '../store/types.js';
import type { Logger } from '../telemetry/logger.js';
import type { Metrics } from '../telemetry/metrics.js';
import type { Tracing } from '../telemetry/tracing.js';
import type { AgentLogs } from './agent-logs.js';
import type { AgentRuntime } from './agent-runtime.js';
import type { AgentUpdate } from './agent-update.js';
import type { AgentState } from './agent-service-types.js';
import type { DispatcherStats } from './dispatcher.js';
import type { HeapGauge } from './memory-guard.js';
import type { RemoteRoute, RouteOutcome, Router } from './router.js';
import type { Message } from '../bus/message.js';

export interface AgentSettings {
  maxAgents: number;
  mailboxSize: number;
  /** Bytes waiting per agent (`runtime.mailbox_bytes`). */
  mailboxBytes: number;
  /** Bytes waiting in all mailboxes together (`runtime.max_queued_bytes`). */
  maxQueuedBytes: number;
  /** Share of the V8 heap limit past which new work is refused (`runtime.memory_pressure_ratio`). */
  memoryPressureRatio: number;
  /** `runtime.agent_log_buffer_size`: bytes of log lines kept per agent. */
  logBufferBytes: number;
  /** 0 disables hibernation. */
  idleTimeoutMs: number;
  startupTimeoutMs: number;
  shutdownTimeoutMs: number;
  /** 0 disables the quota. */
  cpuQuotaMillicores: number;
  /** `max_memory_pages` in bytes: no agent runs with a higher limit, whatever its stored `memory_limit` says. */
  maxMemoryBytes: number;
  maxConcurrentExecutions: number;
  /** `local_delivery_hops`: messages a batch may deliver inside its worker; 0 turns worker-local delivery off. */
  localDeliveryHops: number;
  maxRestarts: number;
  restartPeriodMs: number;
  backoff: Partial<BackoffOptions>;
  /** `runtime.update_rollback_window`: an update's rollback window when its request names none; off when unset. */
  rollbackWindow?: RollbackWindow;
}

export interface AgentHostOptions {
  store: Store;
  pool: ExecutorPool;
  bus: MessageBus;
  history: MessageHistory;
  admission: Admission;
  log: Logger;
  /** The server's `svc_*` metrics; the host counts what it sees there. */
  metrics: Metrics;
  /** Spans of deploys, lifecycle events, messages and executions. */
  tracing: Tracing;
  clock: Clock;
  random?: Random;
  settings: AgentSettings;
  /** Agents' sends checked against their capabilities, and quarantine (DESIGN.md section 9); unchecked when unset. */
  sendPolicy?: SendPolicy;
  /** The V8 heap as the memory guard reads it; V8's own figures by default. */
  heap?: HeapGauge;
  /** Receivers on other nodes, in a cluster. */
  remote?: RemoteRoute;
  /** The server's id generator, for the messages its agents send. */
  newId: IdGenerator;
  /** In a cluster: whether a stored agent now runs on another node (it failed over while this one was down); such an agent is not restored but deleted here. */
  movedAway?: (agentId: string) => boolean;
}

export interface HostStats extends DispatcherStats {
  restarts: number;
}

export interface AgentHost {
  readonly store: Store;
  readonly pool: ExecutorPool;
  readonly bus: MessageBus;
  readonly history: MessageHistory;
  readonly admission: Admission;
  readonly settings: AgentSettings;
  /** False once stopping: deploys and sends are refused (UNAVAILABLE). */
  readonly accepting: boolean;
  /** Agents on this node, failed ones and deploys in progress included (they count against `max_agents`). */
  readonly size: number;
  /** Starts the agent supervisor and restores every stored agent whose desired state is running. */
  start(): Promise<void>;
  /**
   * Deploys an admitted module: creates and starts the agent, stores it with
   * its module, registers it, publishes its lifecycle events (see the module
   * comment). Resolves once all of that is done; otherwise rejects having
   * stopped and forgotten the agent (ALREADY_EXISTS for a taken name,
   * UNAVAILABLE while stopping, or the start's or the store's error). With
   * `state` (a hand-over) the agent starts from that snapshot, not afresh.
   */
  deploy(agent: NewAgent, module: Uint8Array, admitted: AdmittedModule, state?: InstanceSnapshot): Promise<AgentRuntime>;
  /**
   * Undeploy: delete the record (the store's error, if that fails, with the
   * agent untouched), then stop (drain within the shutdown timeout) and
   * forget. NOT_FOUND if unknown or already being undeployed.
   */
  remove(agentId: string): Promise<void>;
  /**
   * An operator's restart (agent-restart.ts): resolves once the agent runs
   * again. NOT_FOUND if unknown or being undeployed.
   */
  restart(agentId: string): Promise<void>;
  /** An agent's state for a hand-over (agent-runtime.ts `captureState`); from then on it takes no messages. Undefined for an unknown agent. */
  captureAgent(agentId: string): Promise<InstanceSnapshot | undefined>;
  /** Stops a registered agent and keeps it (stored, listed `stopped`) until `restart`. */
  stopAgent(agentId: string): Promise<void>;
  /** An operator's update (agent-update.ts): resolves once the agent runs it. NOT_FOUND if unknown or being undeployed. */
  update(agentId: string, update: AgentUpdate): Promise<void>;
  /** The id of the agent named `agentIdOrName` on this node, or the value itself (an id, or nothing known). */
  resolve(agentIdOrName: string): string;
  /** The agents' own log lines (agent-logs.ts). */
  readonly logs: AgentLogs;
  /** A registered agent. */
  get(agentId: string): AgentRuntime | undefined;
  readonly router: Router;
  /** A message another node forwarded: published here as well, and delivered here or refused, never forwarded again. */
  deliverForwarded(message: Message): RouteOutcome;
  countStates(): Record<AgentState, number>;
  /** Agents neither stopped nor failed (`svc_agents_active`). */
  activeAgents(): number;
  /** Messages waiting in mailboxes (`svc_message_queue_size`). */
  queuedMessages(): number;
  /** Bytes those messages hold (message-size.ts). */
  queuedBytes(): number;
  stats(): HostStats;
  /* The root supervisor's view of the host (a ChildHandle). */
  onExit(listener: (exit: ChildExit) => void): () => void;
  stop(reason?: string): Promise<void>;
  kill(reason?: string): Promise<void>;
}
