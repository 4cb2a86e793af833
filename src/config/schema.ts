import { isClusterSecret } from '../cluster/gossip-cipher.js';
import { address, bool, cpu, duration, int, list, oneOf, ratio, secret, size, subsetOf, table, text, timeout, type Setting } from './setting.js';

/**
 * Every setting of the server, with its default and its doc. This is the only
 * place a setting is defined: the loader, the environment names
 * (`SVC_<SECTION>_<KEY>`) and `docs/configuration.md` are derived from it.
 * Defaults are the reference values of the limits table.
 */
export const CONFIG_SCHEMA = {
  server: {
    http_addr: address('127.0.0.1:8080', 'REST gateway, WebSocket streams, API docs, /health and /ready. Shortcut: SVC_HTTP_ADDR.'),
    grpc_addr: address('127.0.0.1:50051', 'gRPC management API with reflection. Shortcut: SVC_GRPC_ADDR.'),
    metrics_addr: address('127.0.0.1:9090', 'Prometheus metrics listener (GET /metrics). Shortcut: SVC_METRICS_ADDR.'),
    max_connections: int(10_000, 'Open connections accepted per listener; further connections are refused.', 1),
    connection_timeout: timeout('30s', 'Time a new connection may take to send its first request.'),
    request_timeout: timeout('60s', 'Longest time one request may take before it fails with DEADLINE_EXCEEDED.'),
    keepalive_timeout: timeout('60s', 'Idle time after which a kept-alive connection is closed.'),
    rate_limit_enabled: bool(true, 'Limit the requests of each source (its principal, else its IP address) on both API listeners; past the limit, RATE_LIMITED with Retry-After.'),
    rate_limit_per_second: int(1_000, 'Sustained requests per second per source.', 1),
    rate_limit_burst: int(2_000, 'Requests a source may send above the sustained rate before it is limited, refilled at that rate.', 1),
    stream_buffer_size: int(1_024, 'Events a streaming subscriber may fall behind before it is dropped with RESOURCE_EXHAUSTED (slow_consumer).', 1),
    stream_buffer_bytes: size('16MiB', 'Bytes of events a streaming subscriber (gRPC stream, WebSocket) may fall behind by before it is dropped with RESOURCE_EXHAUSTED (slow_consumer); one event larger than this still passes alone.'),
  },
  runtime: {
    max_agents: int(10_000, 'Agents one instance hosts; deploys past it fail with RESOURCE_EXHAUSTED.', 1),
    max_concurrent_executions: int(1_000, 'Executions queued or running across the executor pool at once.', 1),
    executor_workers: int(0, 'Worker threads hosting agent instances; 0 means one per core.', 0, 256),
    wasm_memory_limit: size('4GiB', 'Linear memory of all agents together; instantiation and memory.grow past it fail.'),
    wasm_stack_limit: size('1MiB', 'Native stack of each executor worker, which bounds agent recursion depth.'),
    max_stack_size: size('8MiB', 'Upper bound accepted for wasm_stack_limit.'),
    execution_timeout: timeout('30s', 'Wall-clock limit of one execution; the watchdog stops the worker past it.'),
    agent_idle_timeout: duration('300s', 'Idle time after which an agent hibernates (instance released, state kept); 0 never hibernates.'),
    agent_startup_timeout: timeout('10s', 'Limit for instantiation plus _initialize/_start.'),
    agent_shutdown_timeout: timeout('5s', 'Time an undeployed agent has to finish its execution before it is cut.'),
    max_memory_pages: int(1024, 'Largest memory maximum an agent module may declare, in 64 KiB pages.', 1, 65536),
    lower_memory_maximum: bool(false, 'Lower a missing or too-large memory maximum to the limit instead of rejecting the module.'),
    max_execution_time: duration('30s', 'Upper bound accepted for execution_timeout.'),
    fuel_per_execution: int(10_000_000_000, 'Fuel units for one execution (about one unit per WebAssembly instruction).', 1_000),
    cpu_quota_per_agent: cpu('100m', 'CPU one agent may use over a sliding 1 s window; over it, executions are delayed, not killed. 0 disables the quota.'),
    max_file_descriptors: int(
      10,
      'Descriptors an agent may hold. The ABI gives every agent exactly three, fd 0 (input), 1 (messages) and 2 (log), and no call opens more, so any value from 3 up is met.',
      3,
    ),
    max_network_connections: int(0, 'Network connections an agent may open; the ABI has no network calls.', 0, 0),
    max_disk_io_bytes: size('1MiB', 'Bytes an agent may write (fd 1 and fd 2) in one execution; past it the execution fails.'),
    max_output_messages: int(100, 'Messages an agent may send in one execution; past it the execution fails.', 1),
    max_threads_per_agent: int(1, 'Threads an agent runs on; the ABI forbids threads.', 1, 1),
    max_spawned_processes: int(0, 'Processes an agent may spawn; the ABI has no such call.', 0, 0),
    max_module_size: size('10MiB', 'Largest agent module accepted at deploy; larger is PAYLOAD_TOO_LARGE.'),
    mailbox_size: int(1_000, 'Messages waiting per agent; past it a client send fails with RESOURCE_EXHAUSTED and an agent sender gets a FIPA failure.', 1),
    mailbox_bytes: size('16MiB', 'Bytes of the messages waiting per agent; past it a send is refused as for mailbox_size (reason mailbox_full). An empty mailbox takes any one message.'),
    max_queued_bytes: size('256MiB', 'Bytes of the messages waiting in all mailboxes together; past it sends fail with RESOURCE_EXHAUSTED (reason memory_pressure) and an agent sender gets a FIPA failure.'),
    memory_pressure_ratio: ratio(0.7, 'Share of the V8 heap limit in use past which the server refuses new messages and deploys (RESOURCE_EXHAUSTED, reason memory_pressure) until the heap shrinks again.'),
    heap_limit: size('0', 'V8 old-generation limit of the server process (Node\'s --max-old-space-size); `svc start` restarts itself with it when set. 0 keeps the limit Node chose (from the machine\'s memory).'),
    message_history_size: int(100, 'Recent messages kept per agent for GET /agents/{id}/messages.', 1),
    message_history_bytes: size('1MiB', 'Bytes of recent messages kept per agent; the oldest go first past it, and a single larger message is not kept.'),
    restart_max_restarts: int(5, 'Restarts an agent may make within restart_period; one more and it goes to failed.', 0),
    restart_period: duration('60s', 'Window over which restart_max_restarts is counted.'),
    restart_backoff_initial: duration('100ms', 'Wait before the first restart after a crash; doubles with each restart within the period.'),
    restart_backoff_max: duration('30s', 'Longest wait between restarts.'),
    restart_backoff_jitter: ratio(0.2, 'Random spread of each wait (0.2 = ±20 %), so agents that crashed together restart apart.'),
  },
  security: {
    auth_enabled: bool(false, 'Require a credential on the management API (both listeners). Off: every caller is `anonymous` with every permission.'),
    allow_unauthenticated: bool(false, 'With auth_enabled = false, listen on a non-loopback address anyway; without it the server refuses to start there.'),
    api_key_header: text('X-API-Key', 'HTTP header carrying an API key (`svc_<key_id>_<secret>`); gRPC metadata uses its lowercase form.'),
    hash_algorithm: oneOf(['sha256', 'sha384', 'sha512'] as const, 'sha256', 'Hash of salt + secret stored for each API key.'),
    salt: secret('Salt of the API key hashes (SVC_SECURITY_SALT). Empty: one is generated into the data directory (mode 0600) and kept.'),
    bootstrap_admin_key: secret('A whole `svc_<key_id>_<secret>` key (SVC_SECURITY_BOOTSTRAP_ADMIN_KEY) made sure at start to exist as an admin key with that secret.'),
    rate_limit_per_key: int(36_000, 'Requests per hour one API key may make (a key may be given its own figure).', 1),
    burst_limit: int(1_000, 'Requests a key may make above its hourly rate before it is limited.', 1),
    auto_rotate: bool(false, 'Make API keys rotate: a key whose secret is older than rotation_interval keeps working for grace_period more, then is refused until rotated.'),
    rotation_interval: duration('30d', 'Age of a key secret after which auto_rotate asks for its rotation.'),
    grace_period: duration('7d', 'How long the old secret of a rotated key keeps working.'),
    jwt_algorithm: oneOf(['RS256', 'ES256', 'EdDSA', 'HS256'] as const, 'RS256', 'Algorithm of the tokens the server issues and of tokens signed with jwt_public_key_file. HS256 needs jwt_secret.'),
    jwt_secret: secret('HS256 key (SVC_SECURITY_JWT_SECRET, at least 32 bytes). Environment only: set in a TOML file it stops the start.'),
    jwt_public_key_file: text('', 'PEM public key (or certificate) that signs accepted tokens of issuer jwt_issuer, besides the server\'s own key.'),
    jwt_private_key_file: text('', 'PEM private key the server signs its own tokens with; empty: a key pair generated into the data directory.'),
    jwt_issuer: text('svc', 'The `iss` of the server\'s own tokens and of tokens signed with jwt_public_key_file.'),
    jwt_audience: text('svc', 'The `aud` every accepted token must name (the server\'s own, and the OAuth issuer\'s access tokens).'),
    jwt_roles_claim: text('roles', 'Claim holding a token\'s roles (an array of names, or one space-separated string); a dotted name reads a nested claim.'),
    jwt_expiry: duration('1h', 'Lifetime of the access tokens the server issues.'),
    refresh_token_expiry: duration('24h', 'Lifetime of a refresh token family, from the first token.'),
    refresh_token_rotation: bool(true, 'Each refresh gives a new refresh token and kills the old; presenting a dead one revokes its whole family.'),
    oauth_issuer: text('', 'OAuth 2.0 / OIDC issuer URL: its discovery document gives the endpoints and the JWKS its access tokens are verified with.'),
    authorization_endpoint: text('', 'Authorization endpoint, when the issuer has no discovery document (with token_endpoint).'),
    token_endpoint: text('', 'Token endpoint, when the issuer has no discovery document.'),
    userinfo_endpoint: text('', 'UserInfo endpoint, when the issuer has no discovery document.'),
    client_id: text('', 'This server\'s client id at the OAuth issuer (browser login at /api/v1/auth/login).'),
    client_secret: secret('This server\'s client secret at the OAuth issuer (SVC_SECURITY_CLIENT_SECRET); empty for a public client.'),
    redirect_uri: text('', 'Where the issuer sends the browser back: this server\'s /api/v1/auth/callback as the browser reaches it.'),
    scopes: list(['openid', 'profile', 'svc.access'], 'Scopes asked for at login.'),
    tls_cert_file: text('', 'PEM certificate chain of both API listeners; with tls_key_file it switches them to TLS (HTTPS, gRPC over TLS). Reloaded when the file changes.'),
    tls_key_file: text('', 'PEM private key of tls_cert_file. Reloaded when the file changes.'),
    tls_ca_file: text('', 'PEM CA certificates client certificates are verified against. Reloaded when the file changes.'),
    min_tls_version: oneOf(['1.3'] as const, '1.3', 'Lowest TLS version accepted; TLS 1.3 is the only one offered.'),
    cipher_suites: subsetOf(['TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256', 'TLS_AES_128_GCM_SHA256'] as const, ['TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256', 'TLS_AES_128_GCM_SHA256'], 'TLS 1.3 cipher suites offered, in order of preference.'),
    require_client_cert: bool(false, 'Refuse a TLS connection that presents no client certificate.'),
    verify_client_cert: bool(true, 'Verify client certificates against tls_ca_file; a verified one authenticates `cert:<subject CN>`.'),
    enable_ocsp_stapling: bool(false, 'Staple an OCSP response, fetched from the certificate\'s responder and refreshed, on the HTTPS listener.'),
    policy_file: text('', 'casbin policy (`p, role, object, action` and `g, principal, role` lines) that replaces the built-in one.'),
    max_failed_auth_attempts: int(3, 'Failed authentications a source may make within failed_auth_window; one more blocks it. Also the refused sends after which an agent is quarantined.', 1),
    failed_auth_window: duration('5m', 'Window over which failed authentications (and an agent\'s refused sends) are counted.'),
    block_duration: duration('15m', 'How long a blocked source gets RATE_LIMITED (reason auth_blocked).'),
    auto_block_suspicious_ips: bool(true, 'Block a source (IP address, and the key id it named) that fails authentication too often.'),
    enable_lockdown_mode: bool(false, 'Start in lockdown: every operation but health, metrics and audit answers UNAVAILABLE (reason lockdown); PUT /api/v1/system/lockdown lifts it.'),
    auto_quarantine_suspicious_agents: bool(true, 'Fail (reason quarantined) an agent whose sends are refused more than max_failed_auth_attempts times within failed_auth_window.'),
    audit_events: subsetOf(
      ['authentication', 'authorization', 'agent_creation', 'agent_deletion', 'configuration_change', 'admin_action'] as const,
      ['authentication', 'authorization', 'agent_creation', 'agent_deletion', 'configuration_change', 'admin_action'],
      'Audit events recorded (GET /api/v1/audit).',
    ),
    audit_retention: duration('90d', 'How long audit records are kept.'),
  },
  observability: {
    log_level: oneOf(['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const, 'info', 'Lowest level written to the log.'),
    format: oneOf(['json', 'pretty'] as const, 'json', 'Log format: bunyan JSON lines or human-readable text.'),
    include_trace_id: bool(true, 'Add trace_id to log lines written inside a trace.'),
    include_span_id: bool(false, 'Add span_id to log lines written inside a trace.'),
    debug_sample_rate: ratio(1, 'Fraction of debug lines written when log_level is debug.'),
    enable_tracing: bool(false, 'Export OpenTelemetry traces.'),
    enable_metrics: bool(true, 'Serve Prometheus metrics on the metrics listener, and push them to otlp_endpoint when it is set.'),
    enable_logging: bool(true, 'Write log lines.'),
    otlp_endpoint: text('', 'OTLP collector endpoint (http://host:4318 or grpc://host:4317); empty disables export.'),
    otlp_timeout: timeout('10s', 'Timeout of one OTLP export.'),
    otlp_headers: table('Headers sent with OTLP exports (k=v,k2=v2).'),
    trace_sample_rate: ratio(0.1, 'Fraction of new traces sampled that an API call starts; a call that continues a trace follows its decision.'),
    message_trace_sample_rate: ratio(0.01, 'Fraction of new traces sampled that an agent message starts (one that carries no trace context); a message in a trace follows its decision.'),
    metrics_export_interval: duration('60s', 'Interval of OTLP metric exports.'),
    service_name: text('svc', 'service.name resource attribute.'),
    service_version: text('', 'service.version resource attribute; empty means the package version.'),
    deployment_environment: text('development', 'deployment.environment resource attribute.'),
  },
  cluster: {
    addr: address('', 'Gossip bind address (host:port), UDP and TCP on one port; empty runs a single node. Env: SVC_CLUSTER_ADDR. Without cluster.secret it must be a loopback address.', true),
    advertise_addr: address('', 'Gossip address other nodes reach this one at; empty means cluster.addr with its bound port (a wildcard host needs this set).', true),
    seeds: list([], 'Addresses (gossip host:port) of nodes to join at start, beside the members this node last knew. Env: SVC_CLUSTER_SEEDS (comma-separated).'),
    node_id: text('', 'This node\'s id; empty means one is generated and kept in the data directory.'),
    secret: {
      ...text('', 'Cluster key, base64 of 32 bytes: gossip is encrypted and authenticated with AES-256-GCM under it. Without it a node refuses a non-loopback cluster.addr. Generate one with `openssl rand -base64 32`.'),
      kind: 'base64 of 32 bytes',
      secret: true,
      parse: (raw: unknown) => (typeof raw === 'string' && (raw === '' || isClusterSecret(raw)) ? raw : undefined),
    },
    probe_interval: timeout('500ms', 'Time between two probes of this node (each probes one member); scaled by the local health score up to awareness_max_multiplier times.'),
    probe_timeout: timeout('200ms', 'Wait for a direct ack before asking indirect_checks members to probe; an ack still counts until the probe interval ends. Shorter than probe_interval.'),
    indirect_checks: int(3, 'Members asked to probe a member that did not ack (SWIM ping-req); each answers with an ack or a nack.', 0, 16),
    suspicion_mult: int(3, 'Suspicion timeout = suspicion_mult × max(1, log10 n) × probe_interval, once confirmed by suspicion_mult − 2 other members.', 1, 100),
    suspicion_max_timeout_mult: int(6, 'An unconfirmed suspicion lasts up to this many times the suspicion timeout; independent confirmations shorten it.', 1, 100),
    gossip_interval: timeout('200ms', 'Time between two gossip rounds; each sends pending news to gossip_nodes members.'),
    gossip_nodes: int(3, 'Members each gossip round sends to.', 1, 64),
    push_pull_interval: timeout('30s', 'Time between two full-state exchanges with a random member (× ceil(log2 n − 5) + 1 above 32 members); also how long the dead still receive gossip.'),
    retransmit_mult: int(4, 'Each piece of news is sent retransmit_mult × ceil(log10(n + 1)) times.', 1, 100),
    awareness_max_multiplier: int(8, 'Upper bound of the local health multiplier on probe interval and timeout (Lifeguard); 1 turns local health off.', 1, 100),
    reconnect_interval: timeout('10s', 'Time between two attempts to reach a member held dead (a full-state exchange with one at random), so partitions heal.'),
    reconnect_timeout: duration('24h', 'How long a dead or departed member is kept and retried before it is forgotten.'),
    replication_factor: int(2, 'Nodes that store an agent\'s module before its deploy is acknowledged. Reserved: agents do not fail over between nodes yet, so a deploy is acknowledged once stored on the node that received it.', 1, 16),
  },
  storage: {
    data_dir: text('./data', 'Directory of the SQLite file and module blobs. Shortcut: SVC_DATA_DIR.'),
  },
} as const satisfies Record<string, Record<string, Setting<unknown>>>;

export type ConfigSchema = typeof CONFIG_SCHEMA;
export type SectionName = keyof ConfigSchema;

type ValueOf<S> = S extends Setting<infer T> ? T : never;

/** The resolved configuration, typed from the schema. */
export type Config = {
  readonly [Section in SectionName]: {
    readonly [Key in keyof ConfigSchema[Section]]: ValueOf<ConfigSchema[Section][Key]>;
  };
};

/** Environment shortcuts of DESIGN.md section 5 and the setting each one sets. */
export const ENV_SHORTCUTS: Readonly<Record<string, readonly [SectionName, string]>> = {
  SVC_HTTP_ADDR: ['server', 'http_addr'],
  SVC_GRPC_ADDR: ['server', 'grpc_addr'],
  SVC_METRICS_ADDR: ['server', 'metrics_addr'],
  SVC_DATA_DIR: ['storage', 'data_dir'],
};
