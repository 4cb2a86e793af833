/**
 * What every command that talks to a server shares: the clients of both
 * doors, made on first use from the resolved connection (TLS and
 * credentials applied), closed when the command ends, and a failed call
 * turned into one line on stderr and its exit code.
 */
import { credentials as grpcCredentials, InterceptingCall, type Interceptor } from '@grpc/grpc-js';
import { createGrpcClient, RemoteError, type GrpcClient } from '../api/grpc/grpc-client.js';
import type { CliIo } from './cli-io.js';
import { credentialHeaders, resolveConnection, type Connection, type ConnectionValues } from './connection.js';
import { exitCodeFor } from './exit-codes.js';
import { errorLine, outputFormat, type OutputFormat } from './output.js';
import { createRestClient, type RestClient } from './rest-client.js';

/** A unary call that takes longer fails with DEADLINE_EXCEEDED; deploys wait for the agent's start, so this is generous. */
export const CALL_TIMEOUT_MS = 60_000;

export interface Remote {
  readonly io: CliIo;
  readonly output: OutputFormat;
  readonly connection: Connection;
  grpc(): GrpcClient;
  rest(): RestClient;
}

/** Adds the credentials to every call's metadata: call credentials would need TLS, and a local server may run without it. */
function credentialInterceptor(headers: Record<string, string>): Interceptor {
  return (options, nextCall) =>
    new InterceptingCall(nextCall(options), {
      start(metadata, listener, next) {
        for (const [name, value] of Object.entries(headers)) metadata.set(name, value);
        next(metadata, listener);
      },
    });
}

function createGrpcClientFor(connection: Connection): GrpcClient {
  const headers = credentialHeaders(connection.credentials);
  const { tls } = connection;
  const channel = tls === undefined ? grpcCredentials.createInsecure() : grpcCredentials.createSsl(tls.ca ?? null, tls.key ?? null, tls.cert ?? null);
  return createGrpcClient(connection.grpcAddress(), Object.keys(headers).length === 0 ? {} : { interceptors: [credentialInterceptor(headers)] }, channel);
}

/** The socket error's code says it all; grpc-js's text for a failed connect is long and nested. */
function unreachable(address: string, details: string): { code: string; message: string; metadata: Record<string, string> } {
  const cause = /\b(E[A-Z]{3,})\b/.exec(details)?.[1];
  return { code: 'UNAVAILABLE', message: `no connection to the server at ${address}`, metadata: cause === undefined ? {} : { cause } };
}

/** Runs `command` with the clients it asks for and closes them; a `RemoteError` becomes its line and exit code. */
export async function withRemote(
  values: ConnectionValues & { readonly output?: string | undefined },
  io: CliIo,
  command: (remote: Remote) => Promise<number>,
): Promise<number> {
  const connection = resolveConnection(values, io);
  let grpc: GrpcClient | undefined;
  let rest: RestClient | undefined;
  let dialed = '';
  const remote: Remote = {
    io,
    output: outputFormat(values.output),
    connection,
    grpc() {
      dialed = connection.grpcAddress();
      grpc ??= createGrpcClientFor(connection);
      return grpc;
    },
    rest() {
      dialed = connection.httpAddress();
      rest ??= createRestClient({ address: dialed, tls: connection.tls, credentials: connection.credentials, clock: io.clock });
      return rest;
    },
  };
  try {
    return await command(remote);
  } catch (error) {
    if (!(error instanceof RemoteError)) throw error;
    const { body } = error;
    const detail = `${error.message} ${Object.values(body.metadata).join(' ')}`;
    io.err(errorLine(error.code === 'UNAVAILABLE' && body.trace_id === '' ? unreachable(dialed, detail) : body));
    return exitCodeFor(error.code);
  } finally {
    grpc?.close();
  }
}
