/**
 * What every command that talks to a server shares: the `--server`,
 * `--output` and `--config` options, the gRPC client, and turning a failed
 * call into one line on stderr and its exit code.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { createGrpcClient, RemoteError, type GrpcClient } from '../api/grpc/grpc-client.js';
import { joinAddress, splitAddress } from '../api/host-port.js';
import { loadConfig } from '../config/load.js';
import { exitCodeFor } from './exit-codes.js';
import { errorLine, isOutputFormat, type OutputFormat } from './output.js';

/** A unary call that takes longer fails with DEADLINE_EXCEEDED; deploys wait for the agent's start, so this is generous. */
export const CALL_TIMEOUT_MS = 60_000;

/** A command line that does not parse; main prints it with the usage and exits 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export const REMOTE_OPTIONS = {
  server: { type: 'string' },
  output: { type: 'string', default: 'table' },
  config: { type: 'string' },
} as const satisfies ParseArgsConfig['options'];

export interface Remote {
  readonly client: GrpcClient;
  readonly output: OutputFormat;
  readonly server: string;
  out(text: string): void;
  err(text: string): void;
}

/** `parseArgs` with the remote options added; its own errors become usage errors. */
export function parseRemoteArgs<O extends NonNullable<ParseArgsConfig['options']>>(args: readonly string[], options: O) {
  try {
    return parseArgs({ args: [...args], options: { ...REMOTE_OPTIONS, ...options }, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

/** A wildcard bind address is not somewhere to connect to; the same host's loopback is. */
function dialable(address: string): string {
  const { host, port } = splitAddress(address);
  if (host === '0.0.0.0') return joinAddress('127.0.0.1', port);
  if (host === '::') return joinAddress('::1', port);
  return address;
}

/** `--server`, else the configured `server.grpc_addr` (SVC_GRPC_ADDR, the config file, or the default). */
export function serverAddress(values: { server?: string | undefined; config?: string | undefined }): string {
  if (values.server !== undefined) {
    // Checked here: grpc-js would take '' or 'host' as a target and fail later with a message of its own and exit 1.
    try {
      splitAddress(values.server);
    } catch {
      throw new UsageError(`--server takes HOST:PORT, got '${values.server}'`);
    }
    return values.server;
  }
  const config = loadConfig({ argv: values.config === undefined ? [] : ['--config', values.config], env: process.env });
  return dialable(config.server.grpc_addr);
}

/** grpc-js's text for a failed connect is long and nested; the socket error's code says it all. */
function unreachable(server: string, details: string): { code: string; message: string; metadata: Record<string, string> } {
  const cause = /\b(E[A-Z]{3,})\b/.exec(details)?.[1];
  return { code: 'UNAVAILABLE', message: `no connection to the server at ${server}`, metadata: cause === undefined ? {} : { cause } };
}

/** Runs `command` against the server and closes the client; a `RemoteError` becomes its line and exit code. */
export async function withRemote(
  values: { server?: string | undefined; output?: string | undefined; config?: string | undefined },
  command: (remote: Remote) => Promise<number>,
): Promise<number> {
  const output = values.output ?? 'table';
  if (!isOutputFormat(output)) throw new UsageError(`--output must be table or json, got '${output}'`);
  const server = serverAddress(values);
  const remote: Remote = {
    client: createGrpcClient(server),
    output,
    server,
    out: (text) => void process.stdout.write(text),
    err: (text) => void process.stderr.write(text),
  };
  try {
    return await command(remote);
  } catch (error) {
    if (!(error instanceof RemoteError)) throw error;
    remote.err(errorLine(error.code === 'UNAVAILABLE' && error.body.trace_id === '' ? unreachable(server, error.message) : error.body));
    return exitCodeFor(error.code);
  } finally {
    remote.client.close();
  }
}

export function exactlyOne(positionals: readonly string[], what: string): string {
  const [first] = positionals;
  if (first === undefined || positionals.length !== 1) throw new UsageError(`expected one ${what}`);
  return first;
}
