/**
 * Where a client command connects and with what: the gRPC and REST
 * addresses, TLS files and credentials. Each comes from, first to last: the
 * command's flags, the context (`--context NAME`, else the file's current
 * context), the server configuration (`SVC_GRPC_ADDR`/`SVC_HTTP_ADDR`,
 * `--config FILE`, `./svc.toml`, the defaults), so with no context at all
 * `svc` finds a server started beside it. The credential comes from
 * `--api-key`/`--token`, else `SVC_API_KEY`/`SVC_TOKEN`, else the context.
 */
import { readFileSync } from 'node:fs';
import { joinAddress, splitAddress } from '../api/host-port.js';
import { ConfigError, loadConfig } from '../config/load.js';
import type { Config } from '../config/schema.js';
import type { CliIo } from './cli-io.js';
import { UsageError, type FlagSpec } from './command.js';
import { contextFilePath, readContexts, type CliContext, type ContextField } from './contexts.js';

export const SERVER_FLAG = {
  type: 'string',
  short: 's',
  value: 'HOST:PORT',
  description: "The server's gRPC address (default: the context's server, else the configured server.grpc_addr).",
  group: 'Connection',
} as const satisfies FlagSpec;

export const HTTP_SERVER_FLAG = {
  type: 'string',
  value: 'HOST:PORT',
  description: "The server's REST address (default: the context's http_server, else the configured server.http_addr).",
  group: 'Connection',
} as const satisfies FlagSpec;

export const CONTEXT_FLAG = {
  type: 'string',
  value: 'NAME',
  description: 'Use this context instead of the current one (see svc context).',
  group: 'Connection',
} as const satisfies FlagSpec;

export const CONFIG_FLAG = {
  type: 'string',
  value: 'FILE',
  description: 'Server configuration file to read the server addresses from when no flag or context gives them.',
  group: 'Connection',
} as const satisfies FlagSpec;

export const API_KEY_FLAG = {
  type: 'string',
  value: 'KEY',
  description: "An API key (svc_<key_id>_<secret>) to authenticate with (default: SVC_API_KEY, else the context's api_key).",
  group: 'Connection',
} as const satisfies FlagSpec;

export const TOKEN_FLAG = {
  type: 'string',
  value: 'TOKEN',
  description: "A bearer token to authenticate with (default: SVC_TOKEN, else the context's token).",
  group: 'Connection',
} as const satisfies FlagSpec;

/** The flags of every command that talks to a server over gRPC. */
export const CONNECTION_FLAGS = { server: SERVER_FLAG, context: CONTEXT_FLAG, config: CONFIG_FLAG, 'api-key': API_KEY_FLAG, token: TOKEN_FLAG } as const;

export interface ConnectionValues {
  readonly server?: string | undefined;
  readonly 'http-server'?: string | undefined;
  readonly context?: string | undefined;
  readonly config?: string | undefined;
  readonly 'api-key'?: string | undefined;
  readonly token?: string | undefined;
}

export interface TlsFiles {
  readonly ca?: Buffer;
  readonly cert?: Buffer;
  readonly key?: Buffer;
}

export interface Credentials {
  /** Sent as `X-API-Key`. */
  readonly apiKey?: string;
  /** Sent as `Authorization: Bearer`. */
  readonly token?: string;
}

export interface Connection {
  /** The context used, if any. */
  readonly context: string | undefined;
  grpcAddress(): string;
  httpAddress(): string;
  /** Undefined for plaintext. */
  readonly tls: TlsFiles | undefined;
  readonly credentials: Credentials;
}

function checkedAddress(flag: string, value: string): string {
  // Checked here: grpc-js would take '' or 'host' as a target and fail later with a message of its own and exit 1.
  try {
    splitAddress(value);
  } catch {
    throw new UsageError(`${flag} takes HOST:PORT, got '${value}'`);
  }
  return value;
}

/** A wildcard bind address is not somewhere to connect to; the same host's loopback is. */
export function dialable(address: string): string {
  const { host, port } = splitAddress(address);
  if (host === '0.0.0.0') return joinAddress('127.0.0.1', port);
  if (host === '::') return joinAddress('::1', port);
  return address;
}

function selectedContext(values: ConnectionValues, io: CliIo): { name: string | undefined; context: CliContext } {
  const path = contextFilePath(io.env, io.home);
  const file = readContexts(path);
  const name = values.context ?? file.current_context;
  if (name === undefined) return { name, context: {} };
  const context = Object.hasOwn(file.contexts, name) ? file.contexts[name] : undefined;
  if (context !== undefined) return { name, context };
  if (values.context !== undefined) throw new UsageError(`no context named '${name}' in ${path}`);
  throw new ConfigError(`${path}: current_context`, `names no context: '${name}'`);
}

function readTlsFile(contextName: string | undefined, field: ContextField, path: string | undefined): Buffer | undefined {
  if (path === undefined) return undefined;
  try {
    return readFileSync(path);
  } catch (error) {
    const cause = (error as NodeJS.ErrnoException).code ?? 'EIO';
    throw new ConfigError(`context ${contextName ?? ''}: ${field}`, `cannot read ${path} (${cause})`);
  }
}

export function resolveConnection(values: ConnectionValues, io: CliIo): Connection {
  const grpcFlag = values.server === undefined ? undefined : checkedAddress('--server', values.server);
  const httpFlag = values['http-server'] === undefined ? undefined : checkedAddress('--http-server', values['http-server']);
  const { name, context } = selectedContext(values, io);
  let config: Config | undefined;
  const configured = (): Config => {
    config ??= loadConfig({ argv: values.config === undefined ? [] : ['--config', values.config], env: io.env, cwd: io.cwd });
    return config;
  };
  const tlsFields = [context.tls_ca_file, context.tls_cert_file, context.tls_key_file];
  const tls = tlsFields.every((f) => f === undefined)
    ? undefined
    : {
        ca: readTlsFile(name, 'tls_ca_file', context.tls_ca_file),
        cert: readTlsFile(name, 'tls_cert_file', context.tls_cert_file),
        key: readTlsFile(name, 'tls_key_file', context.tls_key_file),
      };
  const credentials = chosenCredentials(values, io, context);
  return {
    context: name,
    grpcAddress: () => grpcFlag ?? context.server ?? dialable(configured().server.grpc_addr),
    httpAddress: () => httpFlag ?? context.http_server ?? dialable(configured().server.http_addr),
    tls,
    credentials,
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

/** `--api-key`/`--token`, else `SVC_API_KEY`/`SVC_TOKEN` (one of each pair at most), else the context's, as it holds them. */
function chosenCredentials(values: ConnectionValues, io: CliIo, context: CliContext): Credentials {
  const given: Array<[string, string | undefined, string | undefined]> = [
    ['--api-key and --token', values['api-key'], values.token],
    ['SVC_API_KEY and SVC_TOKEN', nonEmpty(io.env.SVC_API_KEY), nonEmpty(io.env.SVC_TOKEN)],
  ];
  for (const [names, apiKey, token] of given) {
    if (apiKey === undefined && token === undefined) continue;
    if (apiKey !== undefined && token !== undefined) throw new UsageError(`${names} are both given: give one credential`);
    return apiKey === undefined ? { token: token as string } : { apiKey };
  }
  return {
    ...(context.api_key === undefined ? {} : { apiKey: context.api_key }),
    ...(context.token === undefined ? {} : { token: context.token }),
  };
}

/** The headers (and gRPC metadata keys) that carry the credentials. */
export function credentialHeaders(credentials: Credentials): Record<string, string> {
  return {
    ...(credentials.apiKey === undefined ? {} : { 'x-api-key': credentials.apiKey }),
    ...(credentials.token === undefined ? {} : { authorization: `Bearer ${credentials.token}` }),
  };
}
