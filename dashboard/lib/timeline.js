/**
 * Each agent's lifecycle timeline, from what the public API shows of it:
 * - lifecycle events on the WebSocket stream (`from`, `to`, `reason`, `at`),
 *   the server's own account, once a stream carries them;
 * - the platform's FIPA `failure` about a message sent to the agent (a crash
 *   while handling it names the trap, fuel or timeout);
 * - what polling the agent shows: its deploy, restarts (`restart_count`,
 *   dated by `updated_at`), module updates and rollbacks (`module_version`
 *   going up or back), and state changes, until the stream has given a
 *   lifecycle event for that agent, after which polling adds no states.
 * `running` ⇄ `executing` is the per-message path, not the lifecycle: left out.
 */
/** @typedef {import('./types.js').Agent} Agent */
/** @typedef {import('./types.js').Message} Message */

/**
 * @typedef {object} TimelineEntry
 * @property {string} at RFC 3339
 * @property {'deployed' | 'transition' | 'crash' | 'failure' | 'restart' | 'update' | 'rollback' | 'undeployed'} kind
 * @property {string | null} [from]
 * @property {string} [to]
 * @property {string} reason
 * @property {'stream' | 'api'} source where it was learnt
 */

/**
 * A lifecycle event as a stream frame carries it.
 * @typedef {object} LifecycleFrame
 * @property {string} agent_id
 * @property {string | null} from
 * @property {string} to
 * @property {string} reason
 * @property {string} at
 */

/** Entries kept per agent; the oldest go first. */
export const TIMELINE_LIMIT = 200;
const MESSAGE_PATH_STATES = new Set(['running', 'executing']);
export const CRASH_REASON = 'execution_crashed';

/**
 * A stream frame that is a lifecycle event rather than a message.
 * @param {unknown} frame
 * @returns {frame is LifecycleFrame}
 */
export function isLifecycleFrame(frame) {
  if (typeof frame !== 'object' || frame === null) return false;
  const f = /** @type {Record<string, unknown>} */ (frame);
  return typeof f.agent_id === 'string' && typeof f.to === 'string' && typeof f.reason === 'string' && f.message_id === undefined;
}

/**
 * @param {string | null | undefined} from
 * @param {string | undefined} to
 */
function isMessagePath(from, to) {
  return from != null && to !== undefined && MESSAGE_PATH_STATES.has(from) && MESSAGE_PATH_STATES.has(to);
}

/**
 * @param {() => string} now RFC 3339 of the present
 * @param {number} [limit]
 */
export function createTimelines(now, limit = TIMELINE_LIMIT) {
  /** @type {Map<string, { entries: TimelineEntry[], last: Agent | undefined, streamed: boolean }>} */
  const agents = new Map();

  /** @param {string} id */
  function of(id) {
    let known = agents.get(id);
    if (known === undefined) {
      known = { entries: [], last: undefined, streamed: false };
      agents.set(id, known);
    }
    return known;
  }

  /**
   * Kept in time order (an entry of the same instant after those learnt before it), so the oldest go first past the limit.
   * @param {string} id
   * @param {TimelineEntry} entry
   */
  function add(id, entry) {
    const { entries } = of(id);
    let at = entries.length;
    while (at > 0 && (entries[at - 1]?.at ?? '') > entry.at) at--;
    entries.splice(at, 0, entry);
    if (entries.length > limit) entries.splice(0, entries.length - limit);
  }

  return {
    /**
     * What a poll shows of the agent, against the previous poll.
     * @param {Agent} agent
     */
    observe(agent) {
      const known = of(agent.agent_id);
      const last = known.last;
      known.last = agent;
      if (last === undefined) {
        add(agent.agent_id, { at: agent.created_at, kind: 'deployed', to: 'starting', reason: 'deployed', source: 'api' });
        if (agent.restart_count > 0) {
          add(agent.agent_id, { at: agent.updated_at, kind: 'restart', reason: `restarted ${agent.restart_count} time${agent.restart_count === 1 ? '' : 's'} before this page opened`, source: 'api' });
        }
        if (!MESSAGE_PATH_STATES.has(agent.state) && !known.streamed) add(agent.agent_id, { at: now(), kind: 'transition', to: agent.state, reason: 'state when this page opened', source: 'api' });
        return;
      }
      const version = agent.module_version;
      const before = last.module_version;
      if (version !== undefined && before !== undefined && version !== before) {
        // An update raises the version; a rollback brings the lower one back.
        const rollback = version < before;
        const reason = rollback ? `rolled back to version ${version}: version ${before} crashed within its rollback window` : `updated from version ${before} to ${version}`;
        add(agent.agent_id, { at: agent.updated_at, kind: rollback ? 'rollback' : 'update', reason, source: 'api' });
      }
      if (known.streamed) return;
      const restarts = agent.restart_count - last.restart_count;
      if (restarts > 0) {
        const which = restarts === 1 ? `restart ${agent.restart_count}` : `restarts ${last.restart_count + 1} to ${agent.restart_count}`;
        add(agent.agent_id, { at: agent.updated_at, kind: 'restart', reason: `${which} by its supervisor`, source: 'api' });
      }
      if (agent.state !== last.state && !isMessagePath(last.state, agent.state)) {
        add(agent.agent_id, { at: now(), kind: 'transition', from: last.state, to: agent.state, reason: 'seen by polling', source: 'api' });
      }
    },
    /** @param {LifecycleFrame} frame */
    lifecycle(frame) {
      of(frame.agent_id).streamed = true;
      if (isMessagePath(frame.from, frame.to)) return;
      add(frame.agent_id, { at: frame.at || now(), kind: 'transition', from: frame.from, to: frame.to, reason: frame.reason, source: 'stream' });
    },
    /**
     * The platform's failure about a message sent to the agent.
     * @param {string} id the agent the failed message was for
     * @param {Message} failure
     */
    failure(id, failure) {
      const reason = failure.metadata?.failure_reason ?? '';
      add(id, { at: failure.created_at, kind: reason === CRASH_REASON ? 'crash' : 'failure', reason: failure.content ?? reason, source: 'stream' });
    },
    /** @param {string} id */
    undeployed(id) {
      add(id, { at: now(), kind: 'undeployed', reason: 'undeployed', source: 'api' });
    },
    /**
     * Oldest first; entries of one instant keep the order they were learnt in.
     * @param {string} id
     * @returns {TimelineEntry[]}
     */
    entries(id) {
      return [...(agents.get(id)?.entries ?? [])];
    },
    /** @param {string} id */
    forget(id) {
      agents.delete(id);
    },
  };
}

/** @typedef {ReturnType<typeof createTimelines>} Timelines */
