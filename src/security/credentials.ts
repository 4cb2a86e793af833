/**
 * What a call presents, read by a door from its protocol (headers or
 * metadata, a cookie, the TLS socket) and handed to `authenticate` as is.
 * Several may be present; authenticate.ts says which one counts.
 */

export interface PeerCertificate {
  /** The peer sent a certificate. */
  readonly presented: boolean;
  /** It chains to `tls_ca_file` (Node's `socket.authorized`). */
  readonly verified: boolean;
  readonly commonName: string | undefined;
}

export interface Credentials {
  /** The API key header (`api_key_header`), as sent. */
  readonly apiKey?: string;
  /** The whole `Authorization` header, as sent. */
  readonly authorization?: string;
  /** The browser session cookie (a token the server issued at login). */
  readonly session?: string;
  readonly certificate?: PeerCertificate;
}

/** Names the session cookie set by /api/v1/auth/callback. */
export const SESSION_COOKIE = 'svc_session';

/** The Bearer token of an `Authorization` header; undefined for any other scheme. */
export function bearerToken(authorization: string): string | undefined {
  const match = /^Bearer +([^\s]+)\s*$/i.exec(authorization);
  return match?.[1];
}
