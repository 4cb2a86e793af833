/**
 * The agent host's settings from the `runtime` section. The relations the
 * schema's per-key types cannot express are checked here, and a violation is
 * a `ConfigError` naming the key, so the server refuses to start as for any
 * other invalid setting.
 */
import { ConfigError } from '../config/load.js';
import type { Config } from '../config/schema.js';
import type { AgentSettings } from './agent-host.js';

const WASM_PAGE_BYTES = 65_536;

export function agentSettingsFrom(runtime: Config['runtime']): AgentSettings {
  if (runtime.restart_period <= 0) throw new ConfigError('runtime.restart_period', 'must be positive');
  if (runtime.restart_backoff_max < runtime.restart_backoff_initial) {
    throw new ConfigError('runtime.restart_backoff_max', `is below runtime.restart_backoff_initial (${runtime.restart_backoff_initial} ms)`);
  }
  if (runtime.restart_backoff_jitter >= 1) throw new ConfigError('runtime.restart_backoff_jitter', 'must be below 1');
  return {
    maxAgents: runtime.max_agents,
    mailboxSize: runtime.mailbox_size,
    mailboxBytes: runtime.mailbox_bytes,
    maxQueuedBytes: runtime.max_queued_bytes,
    memoryPressureRatio: runtime.memory_pressure_ratio,
    logBufferBytes: runtime.agent_log_buffer_size,
    idleTimeoutMs: runtime.agent_idle_timeout,
    startupTimeoutMs: runtime.agent_startup_timeout,
    shutdownTimeoutMs: runtime.agent_shutdown_timeout,
    cpuQuotaMillicores: runtime.cpu_quota_per_agent,
    maxMemoryBytes: maxAgentMemoryBytes(runtime),
    maxConcurrentExecutions: runtime.max_concurrent_executions,
    localDeliveryHops: runtime.local_delivery_hops,
    maxRestarts: runtime.restart_max_restarts,
    restartPeriodMs: runtime.restart_period,
    rollbackWindow: runtime.update_rollback_window,
    backoff: { initialMs: runtime.restart_backoff_initial, maxMs: runtime.restart_backoff_max, jitter: runtime.restart_backoff_jitter },
  };
}

/** The per-agent memory maximum: `wasm_memory_limit` or `max_memory_pages` pages, the lower, in whole pages; what `memory_limit` 0 means. */
export function maxAgentMemoryBytes(runtime: Config['runtime']): number {
  return Math.min(runtime.max_memory_pages, Math.floor(runtime.wasm_memory_limit / WASM_PAGE_BYTES)) * WASM_PAGE_BYTES;
}
