/**
 * What the security steps need from an HTTP request, read the same way for
 * Koa requests and WebSocket upgrades: the operation a route serves, the
 * credentials (API key header, Authorization, the session cookie, the TLS
 * client certificate), the source address and the user agent.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { TLSSocket } from 'node:tls';
import { SESSION_COOKIE, type Credentials, type PeerCertificate } from '../../security/credentials.js';
import type { SecuredCall } from '../../security/gate.js';
import { isOperation, type Operation } from '../../security/permissions.js';
import { operationName, type HttpRoute } from './routes.js';

/** A connection's certificate does not change: read once per socket. */
const certificates = new WeakMap<TLSSocket, PeerCertificate>();

export function peerCertificateOf(socket: Socket): PeerCertificate | undefined {
  if (!(socket instanceof TLSSocket)) return undefined;
  let known = certificates.get(socket);
  if (known === undefined) {
    const certificate = socket.getPeerCertificate();
    const presented = certificate !== null && Object.keys(certificate).length > 0;
    const cn = presented ? certificate.subject?.CN : undefined;
    known = { presented, verified: presented && socket.authorized, commonName: Array.isArray(cn) ? cn[0] : cn };
    certificates.set(socket, known);
  }
  return known;
}

/** IPv4 clients of a dual-stack listener read as `::ffff:a.b.c.d`; blocks and records name the IPv4 address. */
export function sourceIpOf(socket: Socket): string {
  const address = socket.remoteAddress ?? '';
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined || first === '' ? undefined : first;
}

function cookie(req: IncomingMessage, name: string): string | undefined {
  const cookies = header(req, 'cookie');
  if (cookies === undefined) return undefined;
  for (const pair of cookies.split(';')) {
    const eq = pair.indexOf('=');
    if (eq !== -1 && pair.slice(0, eq).trim() === name) return pair.slice(eq + 1).trim() || undefined;
  }
  return undefined;
}

export function credentialsOf(req: IncomingMessage, apiKeyHeader: string): Credentials {
  const credentials: { -readonly [K in keyof Credentials]: Credentials[K] } = {};
  const apiKey = header(req, apiKeyHeader);
  if (apiKey !== undefined) credentials.apiKey = apiKey;
  const authorization = header(req, 'authorization');
  if (authorization !== undefined) credentials.authorization = authorization;
  const session = cookie(req, SESSION_COOKIE);
  if (session !== undefined) credentials.session = session;
  const certificate = peerCertificateOf(req.socket);
  if (certificate !== undefined) credentials.certificate = certificate;
  return credentials;
}

/** The operation of a route; a plain GET of a streaming RPC reads what it would stream (routes.ts `PLAIN_GET_OPERATIONS`). */
export function operationOfRoute(route: HttpRoute, upgrade: boolean): Operation | undefined {
  const name = operationName(route, upgrade);
  return isOperation(name) ? name : undefined;
}

export function securedCallOf(req: IncomingMessage, operation: Operation, traceId: string, apiKeyHeader: string): SecuredCall {
  return {
    operation,
    credentials: credentialsOf(req, apiKeyHeader),
    sourceIp: sourceIpOf(req.socket),
    userAgent: header(req, 'user-agent') ?? '',
    traceId,
    principal: undefined,
    resource: '',
  };
}
