/**
 * A failed authentication: UNAUTHENTICATED for the client (401 with
 * `WWW-Authenticate: Bearer`), with a coarse public reason, and a precise
 * one for the audit record and the log only; a client learns whether to
 * supply a credential, not which check its credential failed.
 */
import { SvcError } from '../errors/svc-error.js';

export type AuthFailureReason =
  | 'no_credential'
  | 'malformed'
  | 'unknown_key'
  | 'wrong_secret'
  | 'revoked'
  | 'expired'
  | 'grace_period_over'
  | 'rotation_overdue'
  | 'not_yet_valid'
  | 'bad_signature'
  | 'unsupported_algorithm'
  | 'wrong_issuer'
  | 'wrong_audience'
  | 'no_subject'
  | 'issuer_unavailable'
  | 'no_certificate'
  | 'unverified_certificate'
  | 'unsupported_scheme'
  | 'refresh_reuse'
  | 'login_failed';

const PUBLIC_REASON: Readonly<Record<AuthFailureReason, string>> = {
  no_credential: 'missing_credential',
  no_certificate: 'missing_credential',
  expired: 'expired_credential',
  grace_period_over: 'expired_credential',
  rotation_overdue: 'expired_credential',
  malformed: 'invalid_credential',
  unknown_key: 'invalid_credential',
  wrong_secret: 'invalid_credential',
  revoked: 'invalid_credential',
  not_yet_valid: 'invalid_credential',
  bad_signature: 'invalid_credential',
  unsupported_algorithm: 'invalid_credential',
  wrong_issuer: 'invalid_credential',
  wrong_audience: 'invalid_credential',
  no_subject: 'invalid_credential',
  issuer_unavailable: 'invalid_credential',
  unverified_certificate: 'invalid_credential',
  unsupported_scheme: 'invalid_credential',
  refresh_reuse: 'invalid_credential',
  login_failed: 'invalid_credential',
};

export class AuthFailure extends SvcError {
  constructor(
    /** For the audit record; never sent. */
    readonly detail: AuthFailureReason,
    /** The key id the credential named, if any: failures are counted against it too. */
    readonly keyId?: string,
  ) {
    const reason = PUBLIC_REASON[detail];
    super('UNAUTHENTICATED', reason === 'missing_credential' ? 'authentication required' : reason === 'expired_credential' ? 'the credential has expired' : 'the credential is not valid', {
      reason,
    });
  }
}

export function isAuthFailure(value: unknown): value is AuthFailure {
  return value instanceof AuthFailure;
}
