/**
 * Agent stderr lines (ABI fd 2) in the server log, with `agent_id`, limited
 * per agent by a token bucket: an agent printing in a loop cannot flood the
 * log or slow the server, and other agents' lines still get through. Lines
 * over the limit are counted, and one summary line per agent and interval
 * says how many were dropped.
 */
import type { Clock, TimerHandle } from '../../supervisors/index.js';
import type { Logger } from './logger.js';
import { createTokenBucket, type TokenBucket } from './token-bucket.js';

/** Sustained stderr lines per agent and second. */
export const AGENT_LOG_LINES_PER_SECOND = 10;
/** Lines an agent may write at once above the sustained rate (a start-up banner, a stack of errors). */
export const AGENT_LOG_BURST = 50;
/** Characters kept of one line; the rest is cut and the line marked `truncated`. */
export const AGENT_LOG_MAX_LINE_CHARS = 2_048;
/** Drops are summed over this long before the summary line is written. */
export const DROPPED_SUMMARY_INTERVAL_MS = 10_000;

export const AGENT_LOG_MSG = 'agent log';
export const AGENT_LOG_DROPPED_MSG = 'agent log lines dropped';

export interface AgentLogLimiterOptions {
  clock: Clock;
  linesPerSecond?: number;
  burst?: number;
  maxLineChars?: number;
  summaryIntervalMs?: number;
}

export interface AgentLogLimiter {
  /** Logs one stderr line of the agent, or counts it as dropped; true when it was logged. */
  write(agentId: string, line: string): boolean;
  /** Writes the agent's pending summary and forgets it (undeploy). */
  forget(agentId: string): void;
  /** Writes every pending summary now (shutdown). */
  flush(): void;
}

interface AgentState {
  bucket: TokenBucket;
  dropped: number;
  summary?: TimerHandle;
}

export function createAgentLogLimiter(log: Logger, options: AgentLogLimiterOptions): AgentLogLimiter {
  const { clock } = options;
  const rate = options.linesPerSecond ?? AGENT_LOG_LINES_PER_SECOND;
  const burst = options.burst ?? AGENT_LOG_BURST;
  const maxChars = options.maxLineChars ?? AGENT_LOG_MAX_LINE_CHARS;
  const interval = options.summaryIntervalMs ?? DROPPED_SUMMARY_INTERVAL_MS;
  const agents = new Map<string, AgentState>();

  function report(agentId: string, state: AgentState): void {
    if (state.summary !== undefined) clock.clearTimeout(state.summary);
    state.summary = undefined;
    if (state.dropped === 0) return;
    log.warn({ agent_id: agentId, dropped: state.dropped, limit_per_second: rate, burst }, AGENT_LOG_DROPPED_MSG);
    state.dropped = 0;
  }

  return {
    write(agentId, line) {
      let state = agents.get(agentId);
      if (state === undefined) {
        state = { bucket: createTokenBucket(burst, rate, clock.now()), dropped: 0 };
        agents.set(agentId, state);
      }
      if (!state.bucket.take(clock.now())) {
        state.dropped += 1;
        const pending = state;
        pending.summary ??= clock.setTimeout(() => report(agentId, pending), interval);
        return false;
      }
      if (line.length > maxChars) log.info({ agent_id: agentId, line: line.slice(0, maxChars), truncated: true }, AGENT_LOG_MSG);
      else log.info({ agent_id: agentId, line }, AGENT_LOG_MSG);
      return true;
    },
    forget(agentId) {
      const state = agents.get(agentId);
      if (state === undefined) return;
      report(agentId, state);
      agents.delete(agentId);
    },
    flush() {
      for (const [agentId, state] of agents) report(agentId, state);
    },
  };
}
