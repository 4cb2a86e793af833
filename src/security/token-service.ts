/**
 * The server's own tokens (DESIGN.md section 9): an access token (a JWT of
 * `jwt_expiry`, signed with the server's key) and a refresh token, opaque,
 * of a family that lives `refresh_token_expiry`. With
 * `refresh_token_rotation` every refresh spends its token and gives a new
 * one; a spent token presented again means it was stolen or replayed, and
 * the whole family is revoked. A family made from an API key ends with the
 * key.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { SignJWT } from 'jose';
import { AuthFailure, type AuthFailureReason } from './auth-failure.js';
import type { SigningKey } from './jwt-signing-key.js';
import type { Principal } from './principal.js';
import type { NewRefreshToken, RefreshStore } from './store/refresh-store.js';
import { rolesClaim } from './token-roles.js';
import type { WallClock } from './wall-clock.js';

/** The JSON of `/auth/token` and `/auth/refresh` (`svc.v1.TokenResponse`). */
export interface TokenPair {
  access_token: string;
  refresh_token: string;
  token_type: 'Bearer';
  /** Seconds the access token is valid. */
  expires_in: number;
}

export interface TokenServiceOptions {
  signing: SigningKey;
  issuer: string;
  audience: string;
  rolesClaim: string;
  accessTtlMs: number;
  refreshTtlMs: number;
  rotation: boolean;
  store: RefreshStore;
  clock: WallClock;
  /** The current roles of a family's API key, or why the key no longer counts. */
  keyRoles(keyId: string): readonly string[] | AuthFailureReason;
}

export interface TokenService {
  /** A new family for `principal` (a credential exchange or a login). */
  issue(principal: Principal): Promise<TokenPair>;
  /** Throws `AuthFailure`; revokes the family on reuse. */
  refresh(refreshToken: string): Promise<TokenPair & { principal: Principal }>;
  /** An access token alone, for the login session cookie. */
  accessToken(principal: Principal): Promise<{ token: string; expiresIn: number }>;
}

const ID_BYTES = 16;
const SECRET_BYTES = 32;
const REFRESH_TOKEN = /^([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/;

function digest(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

function newRefreshToken(now: number): { text: string; row: NewRefreshToken } {
  const tokenId = randomBytes(ID_BYTES).toString('base64url');
  const secret = randomBytes(SECRET_BYTES).toString('base64url');
  return { text: `${tokenId}.${secret}`, row: { tokenId, tokenHash: digest(secret), issuedAt: now } };
}

export function createTokenService(options: TokenServiceOptions): TokenService {
  const { clock, store, signing } = options;
  const expiresIn = Math.max(1, Math.floor(options.accessTtlMs / 1000));

  async function accessToken(principal: Principal): Promise<{ token: string; expiresIn: number }> {
    const now = Math.floor(clock.now() / 1000);
    const token = await new SignJWT({ ...rolesClaim(options.rolesClaim, principal.roles) })
      .setProtectedHeader({ alg: signing.algorithm, kid: signing.kid, typ: 'at+jwt' })
      .setIssuer(options.issuer)
      .setAudience(options.audience)
      .setSubject(principal.id)
      .setIssuedAt(now)
      .setExpirationTime(now + expiresIn)
      .setJti(randomBytes(ID_BYTES).toString('base64url'))
      .sign(signing.signWith);
    return { token, expiresIn };
  }

  async function pair(principal: Principal, refreshToken: string): Promise<TokenPair> {
    const access = await accessToken(principal);
    return { access_token: access.token, refresh_token: refreshToken, token_type: 'Bearer', expires_in: access.expiresIn };
  }

  function refuse(familyId: string, reason: AuthFailureReason, revoke: boolean): never {
    if (revoke) store.revokeFamily(familyId, clock.now(), reason);
    throw new AuthFailure(reason);
  }

  return {
    accessToken,

    async issue(principal) {
      const now = clock.now();
      const first = newRefreshToken(now);
      store.createFamily(
        { familyId: randomBytes(ID_BYTES).toString('base64url'), principal: principal.id, roles: [...principal.roles], keyId: principal.keyId, createdAt: now, expiresAt: now + options.refreshTtlMs },
        first.row,
      );
      return pair(principal, first.text);
    },

    async refresh(text) {
      const match = REFRESH_TOKEN.exec(text);
      if (match === null) throw new AuthFailure('malformed');
      const [, tokenId = '', secret = ''] = match;
      const found = store.get(tokenId);
      if (found === undefined) throw new AuthFailure('revoked');
      const { token, family } = found;
      if (!timingSafeEqual(Buffer.from(digest(secret), 'hex'), Buffer.from(token.tokenHash, 'hex'))) throw new AuthFailure('wrong_secret');
      const now = clock.now();
      if (family.revokedAt !== undefined) throw new AuthFailure('revoked');
      if (now >= family.expiresAt) throw new AuthFailure('expired');
      if (options.rotation && token.usedAt !== undefined) refuse(family.familyId, 'refresh_reuse', true);
      let roles: readonly string[] = family.roles;
      if (family.keyId !== undefined) {
        const current = options.keyRoles(family.keyId);
        if (typeof current === 'string') refuse(family.familyId, current, true);
        roles = current;
      }
      let refreshToken = text;
      if (options.rotation) {
        const next = newRefreshToken(now);
        // Two refreshes racing with one token: the loser is a reuse.
        if (store.use(tokenId, now, next.row) === 'already_used') refuse(family.familyId, 'refresh_reuse', true);
        refreshToken = next.text;
      }
      const principal: Principal = { id: family.principal, roles, kind: 'jwt', ...(family.keyId === undefined ? {} : { keyId: family.keyId }) };
      return { ...(await pair(principal, refreshToken)), principal };
    },
  };
}
