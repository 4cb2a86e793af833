/**
 * What this server's API offers beyond the routes every version has, read
 * from its OpenAPI document (`GET /api/v1/openapi.json`), so one page works
 * against servers before and after an operation lands: a control appears
 * when the document lists its route. Operations are found by their RPC name
 * (the document's operationId) or by their path, and called at the method
 * and path the document gives.
 */

/**
 * An operation as the document lists it.
 * @typedef {object} Operation
 * @property {string} method upper case
 * @property {string} path a template with one `{variable}` where it names an agent
 * @property {string[]} bodyFields top-level fields of its JSON body
 */

/**
 * @typedef {object} Features
 * @property {Operation} [restart] RestartAgent
 * @property {Operation} [update] UpdateAgent (`PATCH /api/v1/agents/{id}`)
 * @property {Operation} [logs] an agent's recent log lines (GET `.../agents/{id}/logs`)
 * @property {Operation} [logsFollow] FollowAgentLogs over WebSocket: the agent's log lines as it writes them
 * @property {Operation} [cluster] the cluster's members (`GET /api/v1/cluster/members`)
 * @property {boolean} login whether the browser login (`GET /api/v1/auth/login`) exists
 * @property {string} [throttledField] the Agent field with the agent's throttled time
 */

export const CLUSTER_MEMBERS_PATH = '/api/v1/cluster/members';
export const LOGIN_PATH = '/api/v1/auth/login';
const AGENT_PATH = /^\/api\/v1\/agents\/\{[^}/]+\}$/;
const AGENT_LOGS_PATH = /^\/api\/v1\/agents\/\{[^}/]+\}\/logs$/;
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** Features of a document that could not be read: nothing optional, the login offered in case. */
export const NO_FEATURES = Object.freeze(/** @type {Features} */ ({ login: true }));

/**
 * @param {unknown} value
 * @returns {value is Record<string, unknown>}
 */
function isObject(value) {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Follows a local `$ref` (`#/components/schemas/X`) once.
 * @param {Record<string, unknown>} doc
 * @param {unknown} schema
 * @returns {Record<string, unknown> | undefined}
 */
function resolveSchema(doc, schema) {
  if (!isObject(schema)) return undefined;
  const ref = schema.$ref;
  if (typeof ref !== 'string') return schema;
  /** @type {unknown} */
  let node = doc;
  for (const part of ref.replace(/^#\//, '').split('/')) node = isObject(node) ? node[part] : undefined;
  return isObject(node) ? node : undefined;
}

/**
 * @param {Record<string, unknown>} doc
 * @param {Record<string, unknown>} operation
 * @returns {string[]}
 */
function bodyFieldsOf(doc, operation) {
  const body = operation.requestBody;
  const content = isObject(body) && isObject(body.content) ? body.content['application/json'] : undefined;
  const schema = isObject(content) ? resolveSchema(doc, content.schema) : undefined;
  return schema !== undefined && isObject(schema.properties) ? Object.keys(schema.properties) : [];
}

/**
 * Every operation of the document, with its operationId.
 * @param {Record<string, unknown>} doc
 * @returns {Array<Operation & { id: string }>}
 */
function operationsOf(doc) {
  const paths = isObject(doc.paths) ? doc.paths : {};
  return Object.entries(paths).flatMap(([path, item]) =>
    METHODS.flatMap((method) => {
      const operation = isObject(item) ? item[method] : undefined;
      if (!isObject(operation)) return [];
      const id = typeof operation.operationId === 'string' ? operation.operationId : '';
      return [{ id, method: method.toUpperCase(), path, bodyFields: bodyFieldsOf(doc, operation) }];
    }),
  );
}

/**
 * @param {unknown} document the parsed OpenAPI document
 * @returns {Features}
 */
export function featuresOf(document) {
  if (!isObject(document)) return NO_FEATURES;
  const operations = operationsOf(document);
  /** @param {(op: Operation & { id: string }) => boolean} test */
  const find = (test) => {
    const found = operations.find(test);
    return found === undefined ? undefined : { method: found.method, path: found.path, bodyFields: found.bodyFields };
  };
  /** @type {Features} */
  const features = { login: operations.some((op) => op.path === LOGIN_PATH && op.method === 'GET') };
  const restart = find((op) => op.id === 'RestartAgent');
  const update = find((op) => op.id === 'UpdateAgent') ?? find((op) => op.method === 'PATCH' && AGENT_PATH.test(op.path));
  const logs = find((op) => op.method === 'GET' && AGENT_LOGS_PATH.test(op.path));
  const cluster = find((op) => op.method === 'GET' && op.path === CLUSTER_MEMBERS_PATH);
  const logsFollow = find((op) => op.id === 'FollowAgentLogs' && op.method === 'GET');
  if (restart !== undefined) features.restart = restart;
  if (update !== undefined) features.update = update;
  if (logs !== undefined) features.logs = logs;
  if (cluster !== undefined) features.cluster = cluster;
  if (logsFollow !== undefined) features.logsFollow = logsFollow;
  const schemas = isObject(document.components) && isObject(document.components.schemas) ? document.components.schemas : {};
  const agent = resolveSchema(document, schemas.Agent);
  const throttled = agent !== undefined && isObject(agent.properties) ? Object.keys(agent.properties).find((name) => name.startsWith('throttled')) : undefined;
  if (throttled !== undefined) features.throttledField = throttled;
  return features;
}

/** Seconds per unit, by the suffix of a field's name. */
const UNIT_SECONDS = /** @type {const} */ ([
  ['_seconds', 1],
  ['_ms', 1e-3],
  ['_us', 1e-6],
  ['_ns', 1e-9],
]);

/**
 * An agent's throttled time in seconds from the field `field`, its unit read
 * from the name's suffix (seconds when it has none); undefined when the field
 * is absent or not a number.
 * @param {Record<string, unknown>} agent
 * @param {string} field
 * @returns {number | undefined}
 */
export function throttledSeconds(agent, field) {
  const value = agent[field];
  const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof number !== 'number' || !Number.isFinite(number)) return undefined;
  const unit = UNIT_SECONDS.find(([suffix]) => field.endsWith(suffix));
  return number * (unit === undefined ? 1 : unit[1]);
}
