/**
 * Bearer tokens (DESIGN.md section 9), verified with `jose`: the server's
 * own (issuer `jwt_issuer`, its signing key or `jwt_public_key_file`, the
 * one algorithm `jwt_algorithm`) and the OAuth issuer's access tokens (its
 * JWKS, asymmetric algorithms only). Each needs `sub` and `exp`, the
 * audience `jwt_audience`, and is judged with 30 s of leeway on
 * `exp`/`nbf`. `alg: none` never verifies, and a token is only checked
 * against the algorithms of its issuer, so an HS256 token made with a public
 * key as its secret is refused (algorithm confusion).
 *
 * A verified token is cached until it expires: the hot path is a map lookup.
 */
import { decodeJwt, decodeProtectedHeader, errors, jwtVerify, type JWTPayload, type JWTVerifyGetKey, type KeyObject } from 'jose';
import { AuthFailure, type AuthFailureReason } from './auth-failure.js';
import type { Principal } from './principal.js';
import { createTokenCache } from './token-cache.js';
import { rolesFromClaims } from './token-roles.js';
import type { WallClock } from './wall-clock.js';

/** Clock skew tolerated on `exp` and `nbf` (DESIGN.md section 9). */
export const LEEWAY_SECONDS = 30;
/** Tokens kept verified; past it the oldest is verified again on its next use. */
export const TOKEN_CACHE_CAPACITY = 10_000;
/** What an OAuth issuer's access tokens may be signed with: never a shared secret. */
export const ASYMMETRIC_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const;

export interface TokenIssuer {
  readonly issuer: string;
  readonly algorithms: readonly string[];
  /** Tried in order until one verifies the signature. */
  readonly keys?: readonly KeyObject[];
  /** A JWKS (jose's `createRemoteJWKSet`). */
  readonly jwks?: JWTVerifyGetKey;
}

export interface JwtVerifierOptions {
  issuers: readonly TokenIssuer[];
  audience: string;
  rolesClaim: string;
  clock: WallClock;
  cacheCapacity?: number;
}

export interface JwtVerifier {
  /** The token's principal; throws `AuthFailure`. Synchronous for a cached token. */
  verify(token: string): Principal | Promise<Principal>;
}

function failureOf(err: unknown): AuthFailureReason {
  if (err instanceof AuthFailure) return err.detail;
  if (err instanceof errors.JWTExpired) return 'expired';
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === 'aud') return 'wrong_audience';
    if (err.claim === 'iss') return 'wrong_issuer';
    if (err.claim === 'nbf') return 'not_yet_valid';
    if (err.claim === 'sub') return 'no_subject';
    return 'malformed';
  }
  if (err instanceof errors.JWSSignatureVerificationFailed || err instanceof errors.JWKSNoMatchingKey) return 'bad_signature';
  if (err instanceof errors.JOSEAlgNotAllowed || err instanceof errors.JOSENotSupported) return 'unsupported_algorithm';
  if (err instanceof errors.JWKSTimeout || err instanceof errors.JWKSInvalid) return 'issuer_unavailable';
  if (err instanceof errors.JOSEError) return 'malformed';
  // A JWKS fetch that failed (the issuer down): the token cannot be judged, so it is not accepted.
  return 'issuer_unavailable';
}

export function createJwtVerifier(options: JwtVerifierOptions): JwtVerifier {
  const cache = createTokenCache(options.cacheCapacity ?? TOKEN_CACHE_CAPACITY);
  const byIssuer = new Map(options.issuers.map((issuer) => [issuer.issuer, issuer]));

  async function verifyWith(token: string, trust: TokenIssuer): Promise<JWTPayload> {
    const checks = {
      issuer: trust.issuer,
      audience: options.audience,
      algorithms: [...trust.algorithms],
      clockTolerance: LEEWAY_SECONDS,
      currentDate: new Date(options.clock.now()),
      requiredClaims: ['sub', 'exp'],
    };
    if (trust.jwks !== undefined) return (await jwtVerify(token, trust.jwks, checks)).payload;
    let last: unknown = new AuthFailure('bad_signature');
    for (const key of trust.keys ?? []) {
      try {
        return (await jwtVerify(token, key, checks)).payload;
      } catch (err) {
        if (!(err instanceof errors.JWSSignatureVerificationFailed)) throw err;
        last = err;
      }
    }
    throw last;
  }

  async function verifyFresh(token: string): Promise<Principal> {
    let alg: unknown;
    let issuer: string | undefined;
    try {
      alg = decodeProtectedHeader(token).alg;
      issuer = decodeJwt(token).iss;
    } catch {
      throw new AuthFailure('malformed');
    }
    if (typeof alg !== 'string' || alg.toLowerCase() === 'none') throw new AuthFailure('unsupported_algorithm');
    const trust = issuer === undefined ? undefined : byIssuer.get(issuer);
    if (trust === undefined) throw new AuthFailure('wrong_issuer');
    let payload: JWTPayload;
    try {
      payload = await verifyWith(token, trust);
    } catch (err) {
      throw new AuthFailure(failureOf(err));
    }
    const subject = payload.sub as string;
    const principal: Principal = { id: subject, roles: rolesFromClaims(payload as Record<string, unknown>, options.rolesClaim), kind: 'jwt' };
    cache.set(token, principal, ((payload.exp as number) + LEEWAY_SECONDS) * 1000);
    return principal;
  }

  return {
    verify(token) {
      return cache.get(token, options.clock.now()) ?? verifyFresh(token);
    },
  };
}
