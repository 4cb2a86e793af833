/**
 * Each agent's own log lines (fd 2, the SDK's `log()`, start-up output),
 * kept per agent in a buffer bounded in bytes (`runtime.agent_log_buffer_size`):
 * the oldest lines leave first, so an agent that logs a lot keeps its
 * latest lines and costs a fixed amount. Every line is kept, even those the
 * server log's rate limit summarises (agent-log-limiter.ts): this is the
 * agent's own record, read by `GetAgentLogs`, and followed live through
 * `lines` (`svc logs -f`).
 */
import { Subject, type Observable } from 'rxjs';
import type { AgentLogLimiter } from '../telemetry/agent-log-limiter.js';

export interface AgentLogLine {
  agent_id: string;
  line: string;
  /** RFC 3339, when the server took the line. */
  time: string;
}

export interface AgentLogs {
  write(agentId: string, line: string): void;
  /** The agent's kept lines, oldest first; the last `limit` of them when given. */
  recent(agentId: string, limit?: number): AgentLogLine[];
  /** Every line as it is written, of every agent. */
  readonly lines: Observable<AgentLogLine>;
  forget(agentId: string): void;
}

interface Kept {
  lines: AgentLogLine[];
  bytes: number;
}

/** What a kept line costs besides its text: its entry, id and time. */
const LINE_OVERHEAD_BYTES = 64;

export function createAgentLogs(options: { maxBytes: number; now: () => number }): AgentLogs {
  const kept = new Map<string, Kept>();
  const subject = new Subject<AgentLogLine>();
  return {
    write(agentId, line) {
      const entry: AgentLogLine = { agent_id: agentId, line, time: new Date(options.now()).toISOString() };
      let agent = kept.get(agentId);
      if (agent === undefined) kept.set(agentId, (agent = { lines: [], bytes: 0 }));
      agent.lines.push(entry);
      agent.bytes += Buffer.byteLength(line) + LINE_OVERHEAD_BYTES;
      let drop = 0;
      while (agent.bytes > options.maxBytes && drop < agent.lines.length) {
        agent.bytes -= Buffer.byteLength(agent.lines[drop]!.line) + LINE_OVERHEAD_BYTES;
        drop += 1;
      }
      if (drop > 0) agent.lines.splice(0, drop);
      subject.next(entry);
    },
    recent(agentId, limit) {
      const lines = kept.get(agentId)?.lines ?? [];
      return limit === undefined ? [...lines] : lines.slice(-limit);
    },
    lines: subject.asObservable(),
    forget(agentId) {
      kept.delete(agentId);
    },
  };
}

/** The agents' log sink: every line kept in `logs`, the agent's own record, and passed on to the server log's rate-limited `limiter`. */
export function keepingLines(limiter: AgentLogLimiter, logs: AgentLogs): AgentLogLimiter {
  return {
    write(agentId, line) {
      logs.write(agentId, line);
      return limiter.write(agentId, line);
    },
    forget: (agentId) => limiter.forget(agentId),
    flush: () => limiter.flush(),
  };
}
