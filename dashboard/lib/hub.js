/**
 * The page's one source of data, shared by the views: the agents (polled
 * from ListAgents, and sooner after stream activity), the metrics history,
 * the message stream, the agent in view (its recent messages, log lines),
 * the cluster's members where the API has them, and whether the API wants a
 * credential. Views read `hub.state` and re-render when `subscribe`'s
 * listener is called; actions (deploy, send, ...) are methods here, so a
 * view never talks to the API itself.
 */
import { ApiError, fillPath } from './api.js';
import { featuresOf, NO_FEATURES } from './features.js';
import { createMessageStore } from './messages.js';
import { createMetricHistory, throttledByAgent } from './metrics.js';
import { streamUrl } from './stream.js';
import { createStreamKeeper } from './stream-keeper.js';
import { createTimelines, isLifecycleFrame } from './timeline.js';

/** @typedef {import('./api.js').Api} Api */
/** @typedef {import('./types.js').Agent} Agent */
/** @typedef {import('./types.js').Message} Message */
/** @typedef {import('./types.js').ClusterMember} ClusterMember */
/** @typedef {import('./features.js').Features} Features */
/** @typedef {import('./stream.js').StreamState} StreamState */

export const POLL_MS = 2_000;
/** After stream activity the agents are listed again this soon, at most once per delay: states and counters follow the messages. */
export const ACTIVITY_REFRESH_MS = 300;
/** Views re-render at most this often, however fast the stream runs. */
export const RENDER_MS = 100;
/** A sent message's reply is waited for this long. */
export const REPLY_TIMEOUT_MS = 30_000;
/** Log lines kept per agent. */
export const LOG_LIMIT = 500;
export const STREAM_PATH = '/api/v1/messages';

/**
 * @typedef {object} PendingSend
 * @property {string} agentId
 * @property {string} messageId
 * @property {string} replyWith
 * @property {number} sentAt epoch ms
 */

/**
 * @typedef {object} HubState
 * @property {Agent[]} agents oldest deploy first
 * @property {boolean} agentsTruncated
 * @property {boolean} listed whether a first list has come
 * @property {Features} features
 * @property {StreamState} stream
 * @property {ApiError | undefined} error the last failed poll, while it keeps failing
 * @property {ApiError | undefined} metricsError the last failed poll of the metrics, while it keeps failing
 * @property {{ required: boolean, message: string }} auth whether the API asks for a credential, and why the last one was refused
 * @property {string | undefined} focus the agent in view
 * @property {Agent | undefined} focused its latest GetAgent
 * @property {ApiError | undefined} focusError
 * @property {ClusterMember[] | undefined} members
 * @property {Map<string, number>} throttled seconds by agent, from the metric
 * @property {Map<string, unknown[]>} logs log entries by agent, oldest first
 * @property {StreamState} logStream the focused agent's log stream (FollowAgentLogs); `down` without one
 */

/** @param {number} bytes */
function randomHex(bytes) {
  return [...crypto.getRandomValues(new Uint8Array(bytes))].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * The list of an answer of unknown shape: its first array field.
 * @param {unknown} answer
 * @returns {unknown[]}
 */
export function firstList(answer) {
  if (Array.isArray(answer)) return answer;
  if (typeof answer !== 'object' || answer === null) return [];
  return /** @type {unknown[] | undefined} */ (Object.values(answer).find(Array.isArray)) ?? [];
}

/**
 * @param {{ api: Api, location: { protocol: string, host: string } }} deps
 */
export function createHub({ api, location }) {
  /** @type {HubState} */
  const state = {
    agents: [],
    agentsTruncated: false,
    listed: false,
    features: NO_FEATURES,
    stream: 'connecting',
    error: undefined,
    metricsError: undefined,
    auth: { required: false, message: '' },
    focus: undefined,
    focused: undefined,
    focusError: undefined,
    members: undefined,
    throttled: new Map(),
    logs: new Map(),
    logStream: 'down',
  };
  const messages = createMessageStore();
  const timelines = createTimelines(() => new Date().toISOString());
  const metrics = createMetricHistory();
  /** @type {Set<() => void>} */
  const listeners = new Set();
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let renderTimer;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let activityTimer;
  /** @type {ReturnType<typeof setInterval> | undefined} */
  let pollTimer;
  let listing = false;

  function changed() {
    renderTimer ??= setTimeout(() => {
      renderTimer = undefined;
      for (const listener of listeners) listener();
    }, RENDER_MS);
  }

  /**
   * A failed call: a 401 asks for a credential and pauses polling; the rest is shown where it happened.
   * @param {unknown} err
   * @returns {ApiError}
   */
  function failed(err) {
    const error = err instanceof ApiError ? err : new ApiError(0, { code: 'INTERNAL', message: String(err) });
    if (error.status === 401) {
      // A refused key is forgotten: presented again, it would only count as one more failed authentication.
      const refusedKey = Boolean(api.apiKey());
      if (refusedKey) api.clearApiKey();
      state.auth = { required: true, message: refusedKey ? `The API key was refused: ${error.message}.` : '' };
      stream.drop();
      logFollow?.keeper.drop();
    }
    changed();
    return error;
  }

  /** @param {Message} message */
  function seen(message) {
    if (!messages.add(message)) return;
    const subject = messages.failureSubject(message);
    if (subject !== undefined) timelines.failure(subject, message);
  }

  /** @param {unknown} frame */
  function onFrame(frame) {
    if (isLifecycleFrame(frame)) timelines.lifecycle(frame);
    else if (typeof frame === 'object' && frame !== null && typeof (/** @type {{message_id?: unknown}} */ (frame).message_id) === 'string') seen(/** @type {Message} */ (frame));
    else return;
    activityTimer ??= setTimeout(() => {
      activityTimer = undefined;
      void listAgents();
    }, ACTIVITY_REFRESH_MS);
    changed();
  }

  const stream = createStreamKeeper({
    url: streamUrl(location, STREAM_PATH),
    onFrame,
    onState: (next) => {
      state.stream = next;
      changed();
    },
    allowed: () => !state.auth.required,
    apiKeyInUse: () => Boolean(api.apiKey()),
  });

  /** @type {{ id: string, keeper: ReturnType<typeof createStreamKeeper>, loaded: boolean } | undefined} */
  let logFollow;

  /**
   * Follows the focused agent's log lines over WebSocket where the API has it; while that stream is live, polls leave its lines alone.
   * @param {string | undefined} id
   */
  function followLogs(id) {
    logFollow?.keeper.drop();
    logFollow = undefined;
    const op = state.features.logsFollow;
    if (id === undefined || op === undefined) return;
    const keeper = createStreamKeeper({
      url: streamUrl(location, fillPath(op.path, id)),
      onFrame: (frame) => {
        if (state.focus !== id || typeof frame !== 'object' || frame === null) return;
        state.logs.set(id, [...(state.logs.get(id) ?? []), frame].slice(-LOG_LIMIT));
        changed();
      },
      onState: (next) => {
        if (logFollow?.keeper !== keeper) return;
        state.logStream = next;
        changed();
      },
      allowed: () => !state.auth.required,
      apiKeyInUse: () => Boolean(api.apiKey()),
    });
    logFollow = { id, keeper, loaded: false };
    keeper.ensure();
  }

  /** @returns {Promise<boolean>} whether the API answered */
  async function listAgents() {
    if (listing || state.auth.required) return false;
    listing = true;
    try {
      const { agents, truncated } = await api.listAgents();
      for (const agent of agents) timelines.observe(agent);
      state.agents = agents;
      state.agentsTruncated = truncated;
      state.listed = true;
      state.error = undefined;
      return true;
    } catch (err) {
      state.error = failed(err);
      return false;
    } finally {
      listing = false;
      changed();
    }
  }

  async function pollMetrics() {
    try {
      const samples = await api.metrics();
      metrics.push(samples, Date.now() / 1000);
      state.throttled = throttledByAgent(samples);
      state.metricsError = undefined;
    } catch (err) {
      state.metricsError = failed(err);
    }
  }

  async function pollMembers() {
    const op = state.features.cluster;
    if (op === undefined) return;
    try {
      state.members = /** @type {ClusterMember[]} */ (firstList(await api.request(op.method, op.path)));
    } catch (err) {
      failed(err);
    }
  }

  async function pollFocus() {
    const id = state.focus;
    if (id === undefined) return;
    try {
      const agent = await api.getAgent(id);
      if (state.focus !== id) return;
      timelines.observe(agent);
      state.focused = agent;
      state.focusError = undefined;
      // Without the stream, the agent's history brings its messages (and the replies the page waits for).
      if (state.stream !== 'live') for (const message of await api.recentMessages(id)) seen(message);
      const logs = state.features.logs;
      // The kept lines once; then, while the stream is live, it brings each new one.
      const follow = logFollow?.id === id ? logFollow : undefined;
      if (logs !== undefined && !(follow?.loaded === true && state.logStream === 'live')) {
        state.logs.set(id, firstList(await api.request(logs.method, fillPath(logs.path, id))).slice(-LOG_LIMIT));
        if (follow !== undefined) follow.loaded = true;
      }
    } catch (err) {
      if (state.focus === id) state.focusError = failed(err);
    }
  }

  /** The list first: a credential the API refuses is presented once per poll, not once per call. */
  async function tick() {
    if (!(await listAgents())) return;
    stream.ensure();
    if (logFollow === undefined && state.focus !== undefined) followLogs(state.focus);
    logFollow?.keeper.ensure();
    await Promise.all([pollMetrics(), pollMembers(), pollFocus()]);
    changed();
  }

  async function loadFeatures() {
    try {
      state.features = featuresOf(await api.openApi());
    } catch (err) {
      failed(err);
    }
  }

  return {
    state,
    api,
    messages,
    timelines,
    metrics,
    /** @param {() => void} listener */
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async start() {
      await loadFeatures();
      await tick();
      pollTimer = setInterval(() => void tick(), POLL_MS);
    },
    stop() {
      stream.drop();
      followLogs(undefined);
      for (const timer of [renderTimer, activityTimer]) if (timer !== undefined) clearTimeout(timer);
      if (pollTimer !== undefined) clearInterval(pollTimer);
    },
    /**
     * The agent in view, or none; its recent messages are read at once.
     * @param {string | undefined} id
     */
    async focus(id) {
      if (state.focus === id) return;
      state.focus = id;
      state.focused = state.agents.find((a) => a.agent_id === id);
      state.focusError = undefined;
      followLogs(id);
      changed();
      if (id === undefined || state.auth.required) return;
      try {
        for (const message of await api.recentMessages(id)) seen(message);
      } catch (err) {
        if (state.focus === id) state.focusError = failed(err);
      }
      await pollFocus();
      changed();
    },
    /** @param {string} key */
    async useApiKey(key) {
      api.setApiKey(key);
      stream.resetWait();
      state.auth = { required: false, message: '' };
      changed();
      await tick();
    },
    forgetApiKey() {
      api.clearApiKey();
      stream.resetWait();
      changed();
    },
    /**
     * @param {{ name: string, bytes: Uint8Array, capabilities: string[], memoryLimitBytes?: number }} deploy
     * @param {(bytes: Uint8Array) => string} toBase64
     * @returns {Promise<string>} the new agent's id
     */
    async deploy({ name, bytes, capabilities, memoryLimitBytes }, toBase64) {
      const { agent_id } = await api.deploy({
        name,
        wasm_module: toBase64(bytes),
        ...(capabilities.length > 0 ? { capabilities } : {}),
        ...(memoryLimitBytes === undefined ? {} : { resources: { memory_limit: memoryLimitBytes } }),
      });
      await listAgents();
      return agent_id;
    },
    /** @param {string} id */
    async undeploy(id) {
      await api.undeploy(id);
      timelines.undeployed(id);
      state.agents = state.agents.filter((a) => a.agent_id !== id);
      changed();
    },
    /**
     * Calls a feature-detected operation on an agent (restart, update).
     * @param {import('./features.js').Operation} op
     * @param {string} id
     * @param {Record<string, unknown>} [body]
     */
    async operate(op, id, body) {
      await api.request(op.method, fillPath(op.path, id), body);
      await Promise.all([listAgents(), pollFocus()]);
    },
    /**
     * Sends a message that asks for a reply: `reply_with` names it, and the reply (or the platform's failure) carries it in `in_reply_to`.
     * @param {string} id
     * @param {string} messageType
     * @param {string} content
     * @returns {Promise<PendingSend>}
     */
    async send(id, messageType, content) {
      const replyWith = `dashboard-${randomHex(8)}`;
      const { message_id } = await api.send(id, { message_type: messageType, content, reply_with: replyWith, conversation_id: `dashboard-${randomHex(8)}` });
      changed();
      return { agentId: id, messageId: message_id, replyWith, sentAt: Date.now() };
    },
    /**
     * @param {PendingSend} sent
     * @returns {{ reply: Message | undefined, timedOut: boolean }}
     */
    replyTo(sent) {
      const reply = messages.replyTo(sent.replyWith);
      return { reply, timedOut: reply === undefined && Date.now() - sent.sentAt > REPLY_TIMEOUT_MS };
    },
    /** @param {string} id */
    nameOf(id) {
      return state.agents.find((a) => a.agent_id === id)?.name;
    },
  };
}

/** @typedef {ReturnType<typeof createHub>} Hub */
