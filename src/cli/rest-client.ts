/**
 * GET requests to the REST gateway, for what only it answers (an agent's
 * recent messages). A failure rejects with the same `RemoteError` the gRPC
 * client gives, built from the Error body, so a command handles both doors'
 * failures in one place.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { RemoteError } from '../api/grpc/grpc-client.js';
import type { ErrorBody } from '../api/proto.js';
import { ERROR_CODES, ERROR_TABLE, type ErrorCode } from '../errors/svc-error.js';
import type { Clock } from '../../supervisors/index.js';
import { credentialHeaders, type Credentials, type TlsFiles } from './connection.js';

export interface RestClient {
  /** `path` under the host, query included: `/api/v1/agents/x/messages?message_types=inform`. */
  getJson(path: string, timeoutMs: number): Promise<unknown>;
}

export interface RestClientOptions {
  readonly address: string;
  readonly tls: TlsFiles | undefined;
  readonly credentials: Credentials;
  readonly clock: Clock;
}

function isErrorBody(value: unknown): value is ErrorBody & { code: ErrorCode } {
  const body = value as Partial<ErrorBody> | null;
  return typeof body === 'object' && body !== null && typeof body.message === 'string' && (ERROR_CODES as readonly string[]).includes(body.code ?? '');
}

function failure(code: ErrorCode, message: string, metadata: Record<string, string> = {}, traceId = ''): RemoteError {
  return new RemoteError({ code, message, trace_id: traceId, metadata }, ERROR_TABLE[code].grpc);
}

function readBody(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => (text += chunk));
    res.on('end', () => resolve(text));
    res.on('error', reject);
  });
}

export function createRestClient(options: RestClientOptions): RestClient {
  const { address, tls, credentials, clock } = options;
  return {
    getJson(path, timeoutMs) {
      const url = new URL(path, `${tls === undefined ? 'http' : 'https'}://${address}`);
      const headers = { accept: 'application/json', ...credentialHeaders(credentials) };
      return new Promise((resolve, reject) => {
        const req = tls === undefined ? httpRequest(url, { headers }) : httpsRequest(url, { headers, ca: tls.ca, cert: tls.cert, key: tls.key });
        const timer = clock.setTimeout(() => req.destroy(failure('DEADLINE_EXCEEDED', `no answer from ${address} within ${timeoutMs} ms`)), timeoutMs);
        const settle = (outcome: () => void): void => {
          clock.clearTimeout(timer);
          outcome();
        };
        req.on('error', (error: NodeJS.ErrnoException) => {
          settle(() => reject(error instanceof RemoteError ? error : failure('UNAVAILABLE', error.message, error.code === undefined ? {} : { cause: error.code })));
        });
        req.on('response', (res) => {
          readBody(res).then(
            (text) =>
              settle(() => {
                let body: unknown;
                try {
                  body = JSON.parse(text);
                } catch {
                  reject(failure('INTERNAL', `${address} answered ${res.statusCode ?? 0} with a body that is not JSON`));
                  return;
                }
                const status = res.statusCode ?? 0;
                if (status >= 200 && status < 300) resolve(body);
                else if (isErrorBody(body)) reject(new RemoteError({ ...body, metadata: body.metadata ?? {} }, ERROR_TABLE[body.code].grpc));
                else reject(failure('INTERNAL', `${address} answered ${status} without an error body`));
              }),
            (error: Error) => settle(() => reject(failure('UNAVAILABLE', error.message))),
          );
        });
        req.end();
      });
    },
  };
}
