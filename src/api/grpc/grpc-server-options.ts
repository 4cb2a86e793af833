/**
 * The gRPC listener's settings, read from the `server` and `runtime`
 * sections, and the grpc-js channel options they become.
 */
import type { ServerOptions } from '@grpc/grpc-js';
import type { Config } from '../../config/schema.js';

// The CLI's `--server` reads addresses with these; they live in host-port.ts, shared by every listener.

export interface GrpcServerOptions {
  /** `host:port` (`[v6]:port`); port 0 binds an ephemeral port. */
  address: string;
  maxConnections: number;
  /** Time a new connection may take to send its first request; 0 disables. */
  connectionTimeoutMs: number;
  /** Longest unary call; a stream lives as long as its client's deadline allows. */
  requestTimeoutMs: number;
  /** Idle time after which a connection is closed; also the keepalive ping interval. */
  keepaliveTimeoutMs: number;
  /** `runtime.max_module_size`: a deploy request must fit in one message. */
  maxModuleSize: number;
}

/** Room beside the module in one message: name, capabilities, resources, or a message's 1 MiB content plus metadata. */
export const ENVELOPE_BYTES = 1024 * 1024 + 64 * 1024;
/** How long the server waits for a keepalive ping's answer before closing the connection (gRPC's default). */
export const KEEPALIVE_ACK_TIMEOUT_MS = 20_000;
/** Calls one connection may run at once: enough for many subscriptions, and a bound on what one client can hold open. */
export const MAX_CONCURRENT_STREAMS = 1_000;

export function grpcServerOptionsFrom(config: Config): GrpcServerOptions {
  const { server, runtime } = config;
  return {
    address: server.grpc_addr,
    maxConnections: server.max_connections,
    connectionTimeoutMs: server.connection_timeout,
    requestTimeoutMs: server.request_timeout,
    keepaliveTimeoutMs: server.keepalive_timeout,
    maxModuleSize: runtime.max_module_size,
  };
}

/**
 * grpc-js options. The receive limit admits a module of `max_module_size`
 * plus its envelope, and a little more, so that a module just over the limit
 * still reaches admission and fails as PAYLOAD_TOO_LARGE with the module's
 * size; a message over the receive limit is refused by grpc-js itself before
 * any of it is buffered whole (PAYLOAD_TOO_LARGE too, `reason: too_large`,
 * see grpc-errors.ts `transportError`).
 */
export function channelOptionsFor(options: GrpcServerOptions): ServerOptions {
  return {
    'grpc.max_receive_message_length': options.maxModuleSize + ENVELOPE_BYTES,
    'grpc.max_concurrent_streams': MAX_CONCURRENT_STREAMS,
    'grpc.max_connection_idle_ms': options.keepaliveTimeoutMs,
    'grpc.keepalive_time_ms': options.keepaliveTimeoutMs,
    'grpc.keepalive_timeout_ms': KEEPALIVE_ACK_TIMEOUT_MS,
  };
}
