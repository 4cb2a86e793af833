/**
 * The shapes the dashboard reads from the public API (the JSON form of
 * `svc.v1` messages, snake_case as the API writes them).
 */

/**
 * @typedef {object} AgentResources
 * @property {number} memory_limit
 * @property {number} cpu_shares
 */

/**
 * An agent as `GET /api/v1/agents` lists it. Fields added to the schema later
 * (a throttled time) are read by name through `features.js`.
 * @typedef {object} Agent
 * @property {string} agent_id
 * @property {string} name
 * @property {string[]} capabilities
 * @property {AgentResources} resources
 * @property {string} state
 * @property {string} node_id
 * @property {string} module_sha256
 * @property {number} module_size
 * @property {number} restart_count
 * @property {number} messages_received
 * @property {number} messages_sent
 * @property {number} memory_bytes
 * @property {string} created_at
 * @property {string} updated_at
 * @property {number} [module_version] 1 at deploy, raised by each update; absent from servers without updates
 * @property {ModuleVersion | null} [previous_module] the module before the last update or rollback
 */

/**
 * @typedef {object} ModuleVersion
 * @property {string} sha256
 * @property {number} version
 * @property {number} size
 */

/**
 * A FIPA-ACL message as the API and the WebSocket streams write it; empty
 * fields are left out.
 * @typedef {object} Message
 * @property {string} message_id
 * @property {string} sender
 * @property {string} receiver
 * @property {string} message_type
 * @property {string} [content]
 * @property {string} [conversation_id]
 * @property {string} [reply_with]
 * @property {string} [in_reply_to]
 * @property {string} [protocol]
 * @property {Record<string, string>} [metadata]
 * @property {string} created_at
 */

/**
 * One sample of `GET /api/v1/metrics`.
 * @typedef {object} MetricSample
 * @property {string} name
 * @property {Record<string, string>} [labels]
 * @property {number} value
 */

/**
 * One member of `GET /api/v1/cluster/members`.
 * @typedef {object} ClusterMember
 * @property {string} node_id
 * @property {string} [address]
 * @property {string} [grpc_address]
 * @property {string} [http_address]
 * @property {string} state
 * @property {number} [incarnation]
 * @property {number} [agents]
 */

/**
 * The Error body every failed API call answers with.
 * @typedef {object} ErrorBody
 * @property {string} code
 * @property {string} message
 * @property {string} [trace_id]
 * @property {Record<string, string>} [metadata]
 */

export {};
