/**
 * The browser login of DESIGN.md section 9 with `openid-client`: the
 * authorization-code flow with PKCE (S256), a `state` and a `nonce` per
 * login, against `oauth_issuer` (discovery) or the endpoints given. The
 * verifier waits server-side, keyed by `state`, for `LOGIN_TTL_MS`. The
 * caller's principal is the issuer's access token's (verified like any
 * bearer token, so the API accepts that token too), else the ID token's.
 *
 * An issuer over plain HTTP is accepted only on a loopback address (a
 * development IdP); openid-client refuses it otherwise.
 */
import * as client from 'openid-client';
import { SvcError } from '../errors/svc-error.js';
import { isLoopbackHost } from './protected-mode.js';
import { AuthFailure } from './auth-failure.js';
import type { JwtVerifier } from './jwt-verifier.js';
import type { Principal } from './principal.js';
import { rolesFromClaims } from './token-roles.js';
import type { WallClock } from './wall-clock.js';

/** How long a started login may take to come back. */
export const LOGIN_TTL_MS = 10 * 60_000;
/** Logins waiting at once; past it the oldest is forgotten. */
export const MAX_PENDING_LOGINS = 10_000;

export interface OidcSettings {
  issuer: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  userinfoEndpoint: string;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  scopes: readonly string[];
  rolesClaim: string;
}

export interface CallbackParams {
  code?: string;
  state?: string;
  iss?: string;
  error?: string;
  error_description?: string;
}

export interface OidcLogin {
  /** The issuer's authorization URL for a new login; `returnTo` comes back from `complete`. */
  begin(returnTo: string): Promise<{ authorizationUrl: string; state: string }>;
  /** Exchanges the code; throws AuthFailure (login_failed) for anything the issuer or the checks refuse. */
  complete(params: CallbackParams): Promise<{ principal: Principal; returnTo: string }>;
}

interface Pending {
  verifier: string;
  nonce: string;
  returnTo: string;
  expiresAt: number;
}

function insecureAllowed(url: string): boolean {
  const parsed = new URL(url);
  return parsed.protocol === 'http:' && isLoopbackHost(parsed.hostname);
}

/** The issuer's configuration, discovered once it is reachable. */
export function oidcConfiguration(settings: OidcSettings): () => Promise<client.Configuration> {
  let configured: Promise<client.Configuration> | undefined;
  const auth = settings.clientSecret === '' ? client.None() : client.ClientSecretPost(settings.clientSecret);
  const metadata = settings.clientSecret === '' ? undefined : settings.clientSecret;
  async function make(): Promise<client.Configuration> {
    if (settings.issuer !== '' && settings.authorizationEndpoint === '') {
      const options = insecureAllowed(settings.issuer) ? { execute: [client.allowInsecureRequests] } : {};
      return client.discovery(new URL(settings.issuer), settings.clientId, metadata, auth, options);
    }
    const server: client.ServerMetadata = {
      issuer: settings.issuer !== '' ? settings.issuer : new URL(settings.tokenEndpoint).origin,
      authorization_endpoint: settings.authorizationEndpoint,
      token_endpoint: settings.tokenEndpoint,
      ...(settings.userinfoEndpoint === '' ? {} : { userinfo_endpoint: settings.userinfoEndpoint }),
    };
    const config = new client.Configuration(server, settings.clientId, metadata, auth);
    if (insecureAllowed(settings.tokenEndpoint)) client.allowInsecureRequests(config);
    return config;
  }
  return () => {
    configured ??= make().catch((err: unknown) => {
      configured = undefined;
      throw err;
    });
    return configured;
  };
}

export function createOidcLogin(settings: OidcSettings, configuration: () => Promise<client.Configuration>, verifier: JwtVerifier, clock: WallClock): OidcLogin {
  const pending = new Map<string, Pending>();

  async function config(): Promise<client.Configuration> {
    try {
      return await configuration();
    } catch (err) {
      throw new SvcError('UNAVAILABLE', `the OAuth issuer cannot be reached: ${err instanceof Error ? err.message : String(err)}`, { reason: 'issuer_unavailable' });
    }
  }

  function forget(now: number): void {
    for (const [state, login] of pending) {
      if (login.expiresAt > now && pending.size < MAX_PENDING_LOGINS) break;
      pending.delete(state);
    }
  }

  async function principalOf(tokens: client.TokenEndpointResponse & client.TokenEndpointResponseHelpers): Promise<Principal> {
    try {
      return await verifier.verify(tokens.access_token);
    } catch {
      // An opaque access token, or one for another audience: the ID token (checked by openid-client) names the caller.
    }
    const claims = tokens.claims();
    if (claims === undefined) throw new AuthFailure('login_failed');
    return { id: claims.sub, roles: rolesFromClaims(claims as Record<string, unknown>, settings.rolesClaim), kind: 'jwt' };
  }

  return {
    async begin(returnTo) {
      const issuer = await config();
      const now = clock.now();
      forget(now);
      const verifier = client.randomPKCECodeVerifier();
      const state = client.randomState();
      const nonce = client.randomNonce();
      pending.set(state, { verifier, nonce, returnTo, expiresAt: now + LOGIN_TTL_MS });
      const url = client.buildAuthorizationUrl(issuer, {
        redirect_uri: settings.redirectUri,
        scope: settings.scopes.join(' '),
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
        nonce,
      });
      return { authorizationUrl: url.href, state };
    },

    async complete(params) {
      const state = params.state ?? '';
      const login = pending.get(state);
      pending.delete(state);
      if (login === undefined || login.expiresAt <= clock.now()) throw new AuthFailure('login_failed');
      const issuer = await config();
      const callback = new URL(settings.redirectUri);
      for (const [name, value] of Object.entries(params)) if (typeof value === 'string' && value !== '') callback.searchParams.set(name, value);
      let tokens: client.TokenEndpointResponse & client.TokenEndpointResponseHelpers;
      try {
        tokens = await client.authorizationCodeGrant(issuer, callback, { pkceCodeVerifier: login.verifier, expectedState: state, expectedNonce: login.nonce });
      } catch {
        throw new AuthFailure('login_failed');
      }
      return { principal: await principalOf(tokens), returnTo: login.returnTo };
    },
  };
}
