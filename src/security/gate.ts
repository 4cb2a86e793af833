/**
 * The checks every call passes, in the order of DESIGN.md section 9, as
 * transport-neutral steps over one `SecuredCall`: the source's block →
 * authenticate → rate limit → lockdown → authorize, then the audit record
 * of the outcome. The doors run each step as its own Koa middleware and
 * grpc-js interceptor, in that order, and the WebSocket upgrade runs them
 * all before it upgrades. Health is open: no step acts on it.
 */
import { SvcError } from '../errors/svc-error.js';
import { keyIdOf } from './api-key-format.js';
import type { Authenticate } from './authenticate.js';
import { AuthFailure, isAuthFailure } from './auth-failure.js';
import type { AuditEntry, AuditLog } from './audit-log.js';
import type { Authorizer } from './authorizer.js';
import type { Credentials } from './credentials.js';
import type { Lockdown } from './lockdown.js';
import { CHANGE_EVENTS, OPERATION_ACCESS, type Operation } from './permissions.js';
import type { Principal } from './principal.js';
import type { RateLimits } from './rate-limits.js';
import type { SourceBlocker } from './source-block.js';
import type { AuditEvent, AuditOutcome } from './store/audit-store.js';

/** One call as the steps see it; a door fills it from its protocol. */
export interface SecuredCall {
  readonly operation: Operation;
  readonly credentials: Credentials;
  readonly sourceIp: string;
  readonly userAgent: string;
  /** The trace id the call's answers name. */
  readonly traceId: string;
  /** Set by the authenticate step (undefined for Health, and for an exchange that carries its credential in the request). */
  principal: Principal | undefined;
  /** What the call acts on, for its audit record (an agent id, a key id); a door sets it when it knows. */
  resource: string;
}

export type Step = (call: SecuredCall) => void | Promise<void>;

export interface Gate {
  readonly block: Step;
  readonly authenticate: Step;
  readonly rateLimit: Step;
  readonly lockdown: Step;
  readonly authorize: Step;
  /** The audit step: records a change's outcome; `error` undefined means success. */
  completed(call: SecuredCall, error: SvcError | undefined): void;
  /** Counts and audits a failed authentication (also for exchanges that authenticate from their request). */
  authenticationFailed(call: SecuredCall, failure: AuthFailure): Promise<void>;
}

export interface GateParts {
  /** `auth_enabled`; off, the authorize step lets everything through. */
  enabled: boolean;
  authenticate: Authenticate;
  authorizer: Authorizer;
  blocker: SourceBlocker;
  rateLimits: RateLimits;
  lockdown: Lockdown;
  audit: AuditLog;
}

/** The key id a call names, for blocking by key even before its key is looked at. */
function namedKeyId(credentials: Credentials): string | undefined {
  return credentials.apiKey === undefined ? undefined : keyIdOf(credentials.apiKey);
}

/** Exchanges authenticate from their request; only CreateToken also takes the caller's credential (an API key, a token, a certificate). */
function credentialsFor(call: SecuredCall): Credentials | undefined {
  const access = OPERATION_ACCESS[call.operation];
  if (access.kind === 'open') return undefined;
  if (access.kind === 'permission') return call.credentials;
  if (call.operation !== 'CreateToken') return undefined;
  const { session: _session, ...rest } = call.credentials;
  const present = rest.apiKey !== undefined || rest.authorization !== undefined || rest.certificate?.verified === true;
  return present ? rest : undefined;
}

/** The audit record of `call`, as far as the call knows it. */
export function auditEntry(call: SecuredCall, event: AuditEvent, outcome: AuditOutcome, reason: string): AuditEntry {
  return {
    event,
    outcome,
    principal: call.principal?.id ?? '',
    roles: call.principal?.roles ?? [],
    source_ip: call.sourceIp,
    user_agent: call.userAgent,
    operation: call.operation,
    resource: call.resource,
    trace_id: call.traceId,
    reason,
  };
}

export function createGate(parts: GateParts): Gate {
  const { audit } = parts;
  const isOpen = (call: SecuredCall): boolean => OPERATION_ACCESS[call.operation].kind === 'open';

  async function authenticationFailed(call: SecuredCall, failure: AuthFailure): Promise<void> {
    const keyId = failure.keyId ?? namedKeyId(call.credentials);
    if (keyId !== undefined && call.resource === '') call.resource = `key:${keyId}`;
    audit.record(auditEntry(call, 'authentication', 'failure', failure.detail));
    if (await parts.blocker.failed(call.sourceIp, keyId)) audit.record(auditEntry(call, 'authentication', 'failure', 'auth_blocked'));
  }

  return {
    authenticationFailed,

    async block(call) {
      if (isOpen(call)) return;
      await parts.blocker.check(call.sourceIp, namedKeyId(call.credentials));
    },

    authenticate(call) {
      const credentials = credentialsFor(call);
      if (credentials === undefined) return undefined;
      const fail = async (err: unknown): Promise<never> => {
        if (isAuthFailure(err)) await authenticationFailed(call, err);
        throw err;
      };
      try {
        const principal = parts.authenticate(credentials);
        if (!(principal instanceof Promise)) {
          call.principal = principal;
          return undefined;
        }
        return principal.then((p) => {
          call.principal = p;
        }, fail);
      } catch (err) {
        return fail(err);
      }
    },

    async rateLimit(call) {
      if (isOpen(call)) return;
      await parts.rateLimits.consume(call.principal ?? { id: '', roles: [], kind: 'anonymous' }, call.sourceIp);
    },

    lockdown(call) {
      parts.lockdown.check(call.operation);
    },

    authorize(call) {
      const access = OPERATION_ACCESS[call.operation];
      if (access.kind !== 'permission' || !parts.enabled) return;
      const principal = call.principal as Principal;
      if (parts.authorizer.allowed(principal, access.permission)) return;
      audit.record(auditEntry(call, 'authorization', 'failure', access.permission));
      throw new SvcError('PERMISSION_DENIED', `${principal.id} may not ${access.permission}`, { permission: access.permission });
    },

    completed(call, error) {
      const event = CHANGE_EVENTS[call.operation];
      if (event === undefined) return;
      audit.record(auditEntry(call, event, error === undefined ? 'success' : 'failure', error === undefined ? '' : error.code));
    },
  };
}
