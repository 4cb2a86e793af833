/**
 * The dashboard's client of the public REST API (`/api/v1`). Credentials: the
 * session cookie of the OIDC login travels by itself (same origin); an API
 * key the user entered is kept in the tab's sessionStorage and sent as
 * `X-API-Key`. Every failure is an ApiError carrying the API's Error body.
 */
/** @typedef {import('./types.js').Agent} Agent */
/** @typedef {import('./types.js').Message} Message */
/** @typedef {import('./types.js').MetricSample} MetricSample */
/** @typedef {import('./types.js').ErrorBody} ErrorBody */

export const API_PREFIX = '/api/v1';
export const API_KEY_HEADER = 'X-API-Key';
/** The sessionStorage entry holding the key: gone when the tab closes. */
export const API_KEY_STORAGE = 'svc.dashboard.api_key';
/** ListAgents pages the dashboard reads at most: a table of more is refined by its filter, not scrolled. */
export const LIST_PAGE_SIZE = 1000;
export const MAX_LISTED_AGENTS = 5000;

/** @typedef {Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>} KeyStorage */

export class ApiError extends Error {
  /**
   * @param {number} status the HTTP status; 0 when the server could not be reached
   * @param {ErrorBody} body
   */
  constructor(status, body) {
    super(body.message);
    this.name = 'ApiError';
    this.status = status;
    this.code = body.code;
    this.metadata = body.metadata ?? {};
    this.traceId = body.trace_id ?? '';
  }
}

/**
 * @param {unknown} value
 * @returns {value is ErrorBody}
 */
function isErrorBody(value) {
  return typeof value === 'object' && value !== null && typeof (/** @type {{code?: unknown}} */ (value).code) === 'string' && typeof (/** @type {{message?: unknown}} */ (value).message) === 'string';
}

/**
 * @param {string} text
 * @returns {unknown}
 */
function parseJson(text) {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * Fills the one `{variable}` of an OpenAPI path template with an agent id.
 * @param {string} template
 * @param {string} id
 */
export function fillPath(template, id) {
  return template.replace(/\{[^}]+\}/, encodeURIComponent(id));
}

/**
 * @param {{ fetch: typeof fetch, storage: KeyStorage, base?: string }} deps
 */
export function createApi({ fetch, storage, base = '' }) {
  /**
   * @param {string} method
   * @param {string} path under the listener's root, `/api/v1/...`
   * @param {unknown} [body] sent as JSON
   * @returns {Promise<unknown>} the answer's JSON, which the callers below name by the API's shapes
   */
  async function request(method, path, body) {
    /** @type {Record<string, string>} */
    const headers = { accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const key = storage.getItem(API_KEY_STORAGE);
    if (key !== null && key !== '') headers[API_KEY_HEADER] = key;
    /** @type {Response} */
    let res;
    try {
      res = await fetch(base + path, { method, headers, credentials: 'same-origin', ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    } catch (err) {
      throw new ApiError(0, { code: 'UNAVAILABLE', message: `the server cannot be reached (${err instanceof Error ? err.message : String(err)})` });
    }
    const parsed = parseJson(await res.text());
    if (res.ok) return parsed;
    throw new ApiError(res.status, isErrorBody(parsed) ? parsed : { code: 'UNKNOWN', message: `${res.status} ${res.statusText}` });
  }

  return {
    request,
    /** @returns {string | null} */
    apiKey: () => storage.getItem(API_KEY_STORAGE),
    /** @param {string} key */
    setApiKey(key) {
      storage.setItem(API_KEY_STORAGE, key.trim());
    },
    clearApiKey() {
      storage.removeItem(API_KEY_STORAGE);
    },
    /** @returns {Promise<unknown>} */
    openApi: () => request('GET', `${API_PREFIX}/openapi.json`),
    /**
     * Every agent, page after page, up to MAX_LISTED_AGENTS.
     * @returns {Promise<{ agents: Agent[], truncated: boolean }>}
     */
    async listAgents() {
      /** @type {Agent[]} */
      const agents = [];
      let token = '';
      do {
        const query = new URLSearchParams({ page_size: String(LIST_PAGE_SIZE), ...(token === '' ? {} : { page_token: token }) });
        const page = /** @type {{ agents?: Agent[], next_page_token?: string }} */ (await request('GET', `${API_PREFIX}/agents?${query}`));
        agents.push(...(page.agents ?? []));
        token = page.next_page_token ?? '';
      } while (token !== '' && agents.length < MAX_LISTED_AGENTS);
      return { agents, truncated: token !== '' };
    },
    /**
     * @param {string} id
     * @returns {Promise<Agent>}
     */
    getAgent: async (id) => /** @type {Agent} */ (await request('GET', `${API_PREFIX}/agents/${encodeURIComponent(id)}`)),
    /**
     * @param {{ name: string, wasm_module: string, capabilities?: string[], resources?: { memory_limit?: number, cpu_shares?: number } }} deploy
     * @returns {Promise<{ agent_id: string }>}
     */
    deploy: async (deploy) => /** @type {{ agent_id: string }} */ (await request('POST', `${API_PREFIX}/agents`, deploy)),
    /** @param {string} id */
    undeploy: (id) => request('DELETE', `${API_PREFIX}/agents/${encodeURIComponent(id)}`),
    /**
     * @param {string} id the receiver
     * @param {Partial<Message>} message
     * @returns {Promise<{ message_id: string }>}
     */
    send: async (id, message) => /** @type {{ message_id: string }} */ (await request('POST', `${API_PREFIX}/agents/${encodeURIComponent(id)}/messages`, message)),
    /**
     * @param {string} id
     * @returns {Promise<Message[]>} oldest first
     */
    async recentMessages(id) {
      const answer = /** @type {{ messages?: Message[] }} */ (await request('GET', `${API_PREFIX}/agents/${encodeURIComponent(id)}/messages`));
      return answer.messages ?? [];
    },
    /** @returns {Promise<MetricSample[]>} */
    async metrics() {
      const answer = /** @type {{ samples?: MetricSample[] }} */ (await request('GET', `${API_PREFIX}/metrics`));
      return answer.samples ?? [];
    },
  };
}

/** @typedef {ReturnType<typeof createApi>} Api */
