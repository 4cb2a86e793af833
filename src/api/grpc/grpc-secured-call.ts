/**
 * The gRPC side of the security steps' shared state: the `SecuredCall` of
 * each call, keyed by the call's request metadata (the one object grpc-js
 * hands every interceptor's listener and then the handler), and how it is
 * read from the call: the operation from the method path, the credentials
 * from the metadata (`x-api-key`, `authorization`) and the TLS peer, the
 * source address and the user agent.
 */
import type { Metadata, ServerInterceptingCallInterface } from '@grpc/grpc-js';
import type { Credentials, PeerCertificate } from '../../security/credentials.js';
import type { SecuredCall } from '../../security/gate.js';
import { isOperation, type Operation } from '../../security/permissions.js';
import { RPC_SERVICE } from '../../telemetry/span-names.js';

const calls = new WeakMap<Metadata, SecuredCall>();
const SERVICE_PREFIX = `/${RPC_SERVICE}/`;

export function securedCallOf(metadata: Metadata): SecuredCall | undefined {
  return calls.get(metadata);
}

export function rememberSecuredCall(metadata: Metadata, call: SecuredCall): void {
  calls.set(metadata, call);
}

/** The operation of a management method path; undefined for other services (reflection). */
export function operationOfPath(path: string): Operation | undefined {
  if (!path.startsWith(SERVICE_PREFIX)) return undefined;
  const name = path.slice(SERVICE_PREFIX.length);
  return isOperation(name) ? name : undefined;
}

function first(metadata: Metadata, key: string): string | undefined {
  const [value] = metadata.get(key);
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** grpc-js exposes the peer certificate only once verified; an unverified one reads as none. */
function certificateOf(call: ServerInterceptingCallInterface): PeerCertificate | undefined {
  const auth = call.getAuthContext();
  if (auth.transportSecurityType !== 'ssl') return undefined;
  const certificate = auth.sslPeerCertificate;
  if (certificate === undefined) return { presented: false, verified: false, commonName: undefined };
  const cn = certificate.subject?.CN;
  return { presented: true, verified: true, commonName: Array.isArray(cn) ? cn[0] : cn };
}

export function grpcCredentials(metadata: Metadata, call: ServerInterceptingCallInterface, apiKeyHeader: string): Credentials {
  const credentials: { -readonly [K in keyof Credentials]: Credentials[K] } = {};
  const apiKey = first(metadata, apiKeyHeader);
  if (apiKey !== undefined) credentials.apiKey = apiKey;
  const authorization = first(metadata, 'authorization');
  if (authorization !== undefined) credentials.authorization = authorization;
  const certificate = certificateOf(call);
  if (certificate !== undefined) credentials.certificate = certificate;
  return credentials;
}

export function grpcSourceIp(call: ServerInterceptingCallInterface): string {
  const address = call.getConnectionInfo().remoteAddress ?? '';
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}

export function grpcUserAgent(metadata: Metadata): string {
  return first(metadata, 'user-agent') ?? '';
}
