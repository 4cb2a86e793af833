/**
 * `authenticate(credentials) → principal`, the one check both doors share
 * (DESIGN.md section 9). It knows no transport: the doors read the
 * credentials from their protocol and turn an `AuthFailure` into theirs.
 *
 * A call may carry several credentials; the first present of an API key,
 * an `Authorization` header and the login session cookie is the one judged
 * (a bad one fails the call, there is no falling back), and a verified
 * client certificate authenticates `cert:<CN>` only when none is present.
 * With auth off every caller is `anonymous`.
 */
import type { ApiKeys } from './api-keys.js';
import { AuthFailure } from './auth-failure.js';
import { bearerToken, type Credentials } from './credentials.js';
import type { JwtVerifier } from './jwt-verifier.js';
import { ANONYMOUS, certificatePrincipalId, type Principal } from './principal.js';

export interface AuthenticatorOptions {
  enabled: boolean;
  keys: ApiKeys;
  jwt: JwtVerifier;
  /** `require_client_cert`: a call over a connection without a certificate fails. */
  requireClientCert: boolean;
  /** `verify_client_cert`: a presented certificate that does not verify fails the call. */
  verifyClientCert: boolean;
}

export type Authenticate = (credentials: Credentials) => Principal | Promise<Principal>;

export function createAuthenticator(options: AuthenticatorOptions): Authenticate {
  const { keys, jwt } = options;

  return (credentials) => {
    if (!options.enabled) return ANONYMOUS;
    const certificate = credentials.certificate;
    if (options.requireClientCert && certificate?.presented !== true) throw new AuthFailure('no_certificate');
    if (certificate?.presented === true && !certificate.verified && options.verifyClientCert) throw new AuthFailure('unverified_certificate');

    if (credentials.apiKey !== undefined) {
      const checked = keys.check(credentials.apiKey);
      if (!checked.ok) throw new AuthFailure(checked.reason, checked.keyId);
      return checked.principal;
    }
    if (credentials.authorization !== undefined) {
      const token = bearerToken(credentials.authorization);
      if (token === undefined) throw new AuthFailure('unsupported_scheme');
      return jwt.verify(token);
    }
    if (credentials.session !== undefined) return jwt.verify(credentials.session);
    if (certificate?.verified === true && certificate.commonName !== undefined && certificate.commonName !== '') {
      return { id: certificatePrincipalId(certificate.commonName), roles: [], kind: 'certificate' };
    }
    throw new AuthFailure('no_credential');
  };
}
