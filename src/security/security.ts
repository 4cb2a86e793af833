/**
 * The security layer of DESIGN.md section 9, put together from the
 * configuration: credentials (API keys, the server's own and the OAuth
 * issuer's tokens, client certificates), the permission table, the abuse
 * controls, lockdown and the audit log, as the gate both doors run and the
 * service the security endpoints call.
 */
import { randomBytes, createPublicKey, X509Certificate, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRemoteJWKSet, type JWTVerifyGetKey } from 'jose';
import type Database from 'better-sqlite3';
import type { Clock, TimerHandle } from '../../supervisors/index.js';
import { ConfigError } from '../config/load.js';
import type { Config } from '../config/schema.js';
import type { Logger } from '../telemetry/logger.js';
import { createApiKeys, type ApiKeys } from './api-keys.js';
import { createAuditLog, type AuditLog } from './audit-log.js';
import { createAuthenticator } from './authenticate.js';
import { createAuthorizer, type Authorizer } from './authorizer.js';
import { dataDirSecret } from './data-dir-secret.js';
import { createGate, type Gate } from './gate.js';
import { ASYMMETRIC_ALGORITHMS, createJwtVerifier, type TokenIssuer } from './jwt-verifier.js';
import { loadSigningKey } from './jwt-signing-key.js';
import { createLockdown, type Lockdown } from './lockdown.js';
import { createOidcLogin, oidcConfiguration, type OidcSettings } from './oidc-login.js';
import { createRateLimits } from './rate-limits.js';
import { createSecurityService } from './security-service.js';
import type { SecurityService } from './security-service-types.js';
import { createSourceBlocker } from './source-block.js';
import { createAuditStore } from './store/audit-store.js';
import { createKeyStore } from './store/key-store.js';
import { createRefreshStore } from './store/refresh-store.js';
import { openSecurityDb } from './store/security-db.js';
import { createTokenService } from './token-service.js';
import { wallClockFrom } from './wall-clock.js';

/** How often keys due for rotation under auto_rotate are named in the log. */
export const ROTATION_CHECK_MS = 3_600_000;

export type Mechanism = 'api_key' | 'jwt' | 'oauth' | 'mtls';

export interface Security {
  /** `auth_enabled`. */
  readonly enabled: boolean;
  /** What can authenticate a caller, for the start line. */
  readonly mechanisms: readonly Mechanism[];
  /** The API key header, lowercase (gRPC metadata keys are). */
  readonly apiKeyHeader: string;
  readonly gate: Gate;
  readonly service: SecurityService;
  readonly lockdown: Lockdown;
  readonly authorizer: Authorizer;
  readonly keys: ApiKeys;
  readonly audit: AuditLog;
  close(): void;
}

export interface SecurityOptions {
  dataDir: string;
  clock: Clock;
  log?: Logger;
}

function publicKeyFile(path: string): KeyObject {
  try {
    const pem = readFileSync(path, 'utf8');
    return pem.includes('BEGIN CERTIFICATE') ? new X509Certificate(pem).publicKey : createPublicKey(pem);
  } catch (err) {
    throw new ConfigError('security.jwt_public_key_file', `cannot read a PEM public key or certificate: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** The issuer's JWKS, found through its discovery document on first use (the issuer may be down at start). */
function issuerJwks(discover: () => Promise<{ serverMetadata(): { jwks_uri?: string } }>): JWTVerifyGetKey {
  let jwks: JWTVerifyGetKey | undefined;
  return async (header, token) => {
    if (jwks === undefined) {
      const uri = (await discover()).serverMetadata().jwks_uri;
      if (uri === undefined) throw new Error('the issuer publishes no jwks_uri');
      jwks = createRemoteJWKSet(new URL(uri));
    }
    return jwks(header, token);
  };
}

function oidcSettings(s: Config['security']): OidcSettings {
  return {
    issuer: s.oauth_issuer,
    authorizationEndpoint: s.authorization_endpoint,
    tokenEndpoint: s.token_endpoint,
    userinfoEndpoint: s.userinfo_endpoint,
    // Discovery wants a client id even when only the issuer's JWKS is used; that one sends no request of its own.
    clientId: s.client_id === '' ? 'svc' : s.client_id,
    clientSecret: s.client_secret,
    redirectUri: s.redirect_uri,
    scopes: s.scopes,
    rolesClaim: s.jwt_roles_claim,
  };
}

export async function createSecurity(config: Config, options: SecurityOptions): Promise<Security> {
  const s = config.security;
  const { log } = options;
  const clock = wallClockFrom(options.clock);
  if (s.oauth_issuer !== '' && s.oauth_issuer === s.jwt_issuer) {
    throw new ConfigError('security.jwt_issuer', 'must differ from oauth_issuer: the server\'s own tokens and the issuer\'s are verified with different keys');
  }
  const signing = await loadSigningKey(s, options.dataDir);
  const authorizer = await createAuthorizer(s.policy_file);
  const fileKey = s.jwt_public_key_file === '' ? undefined : publicKeyFile(s.jwt_public_key_file);

  let db: Database.Database | undefined = openSecurityDb({ dataDir: options.dataDir });
  let rotationTimer: TimerHandle | undefined;
  try {
    const salt = s.salt !== '' ? s.salt : dataDirSecret(options.dataDir, 'salt', () => randomBytes(32).toString('base64url'));
    const keys = createApiKeys({
      store: createKeyStore(db),
      clock,
      salt,
      hashAlgorithm: s.hash_algorithm,
      gracePeriodMs: s.grace_period,
      autoRotate: s.auto_rotate,
      rotationIntervalMs: s.rotation_interval,
    });
    if (s.bootstrap_admin_key !== '') {
      try {
        keys.ensureAdmin(s.bootstrap_admin_key, 'bootstrap admin');
      } catch (err) {
        throw new ConfigError('security.bootstrap_admin_key', err instanceof Error ? err.message : String(err));
      }
    }

    const oidc = s.oauth_issuer !== '' || s.authorization_endpoint !== '' ? oidcSettings(s) : undefined;
    const discover = oidc === undefined ? undefined : oidcConfiguration(oidc);
    const issuers: TokenIssuer[] = [{ issuer: s.jwt_issuer, algorithms: [signing.algorithm], keys: fileKey === undefined ? [signing.verifyWith] : [signing.verifyWith, fileKey] }];
    if (discover !== undefined && s.oauth_issuer !== '') issuers.push({ issuer: s.oauth_issuer, algorithms: ASYMMETRIC_ALGORITHMS, jwks: issuerJwks(discover) });
    const jwt = createJwtVerifier({ issuers, audience: s.jwt_audience, rolesClaim: s.jwt_roles_claim, clock });

    const refresh = createRefreshStore(db);
    const tokens = createTokenService({
      signing,
      issuer: s.jwt_issuer,
      audience: s.jwt_audience,
      rolesClaim: s.jwt_roles_claim,
      accessTtlMs: s.jwt_expiry,
      refreshTtlMs: s.refresh_token_expiry,
      rotation: s.refresh_token_rotation,
      store: refresh,
      clock,
      keyRoles: (keyId) => keys.roles(keyId),
    });
    const audit = createAuditLog({
      store: createAuditStore(db),
      events: s.audit_events,
      retentionMs: s.audit_retention,
      clock: options.clock,
      wallClock: clock,
      onPrune: (now) => refresh.pruneExpired(now),
      ...(log === undefined ? {} : { log }),
    });
    const lockdown = createLockdown(s.enable_lockdown_mode);
    const gate = createGate({
      enabled: s.auth_enabled,
      authenticate: createAuthenticator({ enabled: s.auth_enabled, keys, jwt, requireClientCert: s.require_client_cert, verifyClientCert: s.verify_client_cert }),
      authorizer,
      blocker: createSourceBlocker({ enabled: s.auto_block_suspicious_ips, maxFailures: s.max_failed_auth_attempts, windowMs: s.failed_auth_window, blockMs: s.block_duration }),
      rateLimits: createRateLimits({
        enabled: config.server.rate_limit_enabled,
        perSecond: config.server.rate_limit_per_second,
        burst: config.server.rate_limit_burst,
        keyPerHour: s.rate_limit_per_key,
        keyBurst: s.burst_limit,
      }),
      lockdown,
      audit,
    });
    const login = s.client_id === '' || oidc === undefined || discover === undefined ? undefined : createOidcLogin(oidc, discover, jwt, clock);
    const service = createSecurityService({ config, keys, tokens, login, authorizer, gate, audit, lockdown, clock });

    const checkRotation = (): void => {
      const due = keys.dueForRotation();
      if (due.length > 0) log?.warn({ key_ids: due.map((k) => k.key_id) }, 'API keys due for rotation: they stop working at the end of their grace period');
      rotationTimer = options.clock.setTimeout(checkRotation, ROTATION_CHECK_MS);
    };
    if (s.auto_rotate) checkRotation();

    const mechanisms: Mechanism[] = ['api_key', 'jwt'];
    if (oidc !== undefined) mechanisms.push('oauth');
    if (s.tls_ca_file !== '' && s.verify_client_cert) mechanisms.push('mtls');
    const opened = db;
    db = undefined;
    return {
      enabled: s.auth_enabled,
      mechanisms,
      apiKeyHeader: s.api_key_header.toLowerCase(),
      gate,
      service,
      lockdown,
      authorizer,
      keys,
      audit,
      close() {
        if (rotationTimer !== undefined) options.clock.clearTimeout(rotationTimer);
        audit.close();
        if (opened.open) opened.close();
      },
    };
  } finally {
    db?.close();
  }
}
