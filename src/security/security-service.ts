/**
 * `SecurityService` (security-service-types.ts): the token exchange and
 * refresh, the browser login, key management, the audit query, the
 * effective configuration and lockdown. Refused credentials here count
 * towards blocking and are audited exactly as the gate's are.
 */
import type { Config } from '../config/schema.js';
import { configSettingsText } from '../config/redact.js';
import { SvcError } from '../errors/svc-error.js';
import { formatKey } from './api-key-format.js';
import type { ApiKeys, KeyView } from './api-keys.js';
import { AuthFailure, isAuthFailure } from './auth-failure.js';
import type { AuditLog } from './audit-log.js';
import type { Authorizer } from './authorizer.js';
import { auditEntry, type Gate, type SecuredCall } from './gate.js';
import { validateKeyRequest } from './key-request.js';
import type { Lockdown } from './lockdown.js';
import type { OidcLogin } from './oidc-login.js';
import { ANONYMOUS, type Principal } from './principal.js';
import type { ApiKeyInfo, IssuedKey, SecurityService } from './security-service-types.js';
import { AUDIT_EVENTS, type AuditEvent } from './store/audit-store.js';
import type { TokenService } from './token-service.js';
import type { WallClock } from './wall-clock.js';

export const DEFAULT_AUDIT_LIMIT = 100;
export const MAX_AUDIT_LIMIT = 1_000;

export interface SecurityServiceOptions {
  config: Config;
  keys: ApiKeys;
  tokens: TokenService;
  /** Undefined when no OAuth issuer is configured for login. */
  login: OidcLogin | undefined;
  authorizer: Authorizer;
  gate: Gate;
  audit: AuditLog;
  lockdown: Lockdown;
  clock: WallClock;
}

const rfc3339 = (ms: number | undefined): string => (ms === undefined ? '' : new Date(ms).toISOString());

function text(input: Record<string, unknown>, field: string): string {
  const value = input[field];
  return typeof value === 'string' ? value : '';
}

function required(input: Record<string, unknown>, field: string): string {
  const value = text(input, field);
  if (value === '') throw new SvcError('INVALID_ARGUMENT', `${field} is required`, { field, reason: 'required' });
  return value;
}

function issued(key: KeyView, apiKey: string): IssuedKey {
  return {
    key_id: key.key_id,
    api_key: apiKey,
    name: key.name,
    roles: key.roles,
    created_at: rfc3339(key.created_at),
    expires_at: rfc3339(key.expires_at),
    grace_until: rfc3339(key.grace_until),
  };
}

function keyInfo(key: KeyView, now: number): ApiKeyInfo {
  const state = key.revoked_at !== undefined ? 'revoked' : key.expires_at !== undefined && key.expires_at <= now ? 'expired' : 'active';
  return {
    key_id: key.key_id,
    name: key.name,
    roles: key.roles,
    state,
    created_at: rfc3339(key.created_at),
    expires_at: rfc3339(key.expires_at),
    rotated_at: rfc3339(key.rotated_at),
    grace_until: rfc3339(key.grace_until),
    revoked_at: rfc3339(key.revoked_at),
    rate_limit_per_hour: key.rate_limit_per_hour,
  };
}

// eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;

/** A same-origin path (`/dashboard`), never another site (`//evil.example`, `https://…`). */
function returnPath(value: string): string {
  if (value === '') return '';
  if (!value.startsWith('/') || value.startsWith('//') || value.includes('\\') || CONTROL_CHARS.test(value)) {
    throw new SvcError('INVALID_ARGUMENT', 'return_to must be a path on this server', { field: 'return_to', reason: 'not_a_path' });
  }
  return value;
}

export function createSecurityService(options: SecurityServiceOptions): SecurityService {
  const { keys, tokens, gate, audit, lockdown, clock } = options;
  const enabled = options.config.security.auth_enabled;

  /** Runs an exchange: its refused credential is counted and audited; its success is audited. */
  async function exchange<T>(call: SecuredCall, run: () => Promise<{ principal: Principal; result: T }>): Promise<T> {
    try {
      const { principal, result } = await run();
      call.principal = principal;
      audit.record(auditEntry(call, 'authentication', 'success', ''));
      return result;
    } catch (err) {
      if (isAuthFailure(err)) await gate.authenticationFailed(call, err);
      throw err;
    }
  }

  function keyId(input: Record<string, unknown>, call: SecuredCall): string {
    const id = required(input, 'key_id');
    call.resource = `key:${id}`;
    return id;
  }

  return {
    createToken(input, call) {
      return exchange(call, async () => {
        const grant = text(input, 'grant_type');
        let principal: Principal;
        if (grant === 'client_credentials') {
          const checked = keys.check(formatKey(required(input, 'client_id'), required(input, 'client_secret')));
          if (!checked.ok) throw new AuthFailure(checked.reason, checked.keyId);
          principal = checked.principal;
        } else if (grant === '') {
          if (call.principal === undefined && enabled) throw new AuthFailure('no_credential');
          principal = call.principal ?? ANONYMOUS;
        } else {
          throw new SvcError('INVALID_ARGUMENT', `unsupported grant_type ${JSON.stringify(grant.slice(0, 64))}: use client_credentials, or send a credential`, {
            field: 'grant_type',
            reason: 'unsupported_grant_type',
          });
        }
        return { principal, result: await tokens.issue(principal) };
      });
    },

    refreshToken(input, call) {
      const refreshToken = required(input, 'refresh_token');
      return exchange(call, async () => {
        const { principal, ...pair } = await tokens.refresh(refreshToken);
        return { principal, result: pair };
      });
    },

    async login(input) {
      if (options.login === undefined) throw new SvcError('UNAVAILABLE', 'no OAuth issuer is configured for login', { reason: 'login_not_configured' });
      const started = await options.login.begin(returnPath(text(input, 'return_to')));
      return { authorization_url: started.authorizationUrl };
    },

    loginCallback(input, call) {
      const login = options.login;
      if (login === undefined) return Promise.reject(new SvcError('UNAVAILABLE', 'no OAuth issuer is configured for login', { reason: 'login_not_configured' }));
      return exchange(call, async () => {
        if (text(input, 'error') !== '') throw new AuthFailure('login_failed');
        const params = { code: text(input, 'code'), state: text(input, 'state'), iss: text(input, 'iss') };
        const { principal, returnTo } = await login.complete(params);
        const pair = await tokens.issue(principal);
        const session = await tokens.accessToken(principal);
        return { principal, result: { ...pair, session: { token: session.token, maxAgeSeconds: session.expiresIn }, return_to: returnTo } };
      });
    },

    async createKey(input, call) {
      const valid = validateKeyRequest(input, options.authorizer.roles);
      const { key, apiKey } = keys.create(valid);
      call.resource = `key:${key.key_id}`;
      return issued(key, apiKey);
    },

    async listKeys() {
      const now = clock.now();
      return { keys: keys.list().map((key) => keyInfo(key, now)) };
    },

    async revokeKey(input, call) {
      return keyInfo(keys.revoke(keyId(input, call)), clock.now());
    },

    async rotateKey(input, call) {
      const { key, apiKey } = keys.rotate(keyId(input, call));
      return issued(key, apiKey);
    },

    async listAudit(input) {
      const event = text(input, 'event');
      if (event !== '' && !(AUDIT_EVENTS as readonly string[]).includes(event)) {
        throw new SvcError('INVALID_ARGUMENT', `event must be one of ${AUDIT_EVENTS.join(', ')}`, { field: 'event', reason: 'unknown_event' });
      }
      const sinceText = text(input, 'since');
      const since = sinceText === '' ? undefined : Date.parse(sinceText);
      if (since !== undefined && (Number.isNaN(since) || !/^\d{4}-\d\d-\d\dT/.test(sinceText))) {
        throw new SvcError('INVALID_ARGUMENT', 'since must be an RFC 3339 time (2025-01-31T12:00:00Z)', { field: 'since', reason: 'wrong_type' });
      }
      const limit = input.limit === undefined ? 0 : Number(input.limit);
      if (!Number.isSafeInteger(limit) || limit < 0) throw new SvcError('INVALID_ARGUMENT', 'limit must be a whole number >= 0', { field: 'limit', reason: 'wrong_type' });
      const records = audit.query({
        ...(event === '' ? {} : { event: event as AuditEvent }),
        ...(text(input, 'principal') === '' ? {} : { principal: text(input, 'principal') }),
        ...(since === undefined ? {} : { since }),
        limit: limit === 0 ? DEFAULT_AUDIT_LIMIT : Math.min(limit, MAX_AUDIT_LIMIT),
      });
      return { records: records.map((record) => ({ ...record, time: rfc3339(record.time), roles: [...record.roles] })) };
    },

    async systemConfig() {
      return { settings: configSettingsText(options.config), lockdown: lockdown.enabled };
    },

    async setLockdown(input, call) {
      const value = input.enabled ?? false;
      if (typeof value !== 'boolean') throw new SvcError('INVALID_ARGUMENT', 'enabled must be true or false', { field: 'enabled', reason: 'wrong_type' });
      call.resource = 'lockdown';
      lockdown.set(value);
      return { enabled: value };
    },
  };
}
