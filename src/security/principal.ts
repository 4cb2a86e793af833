/**
 * Who is calling, once authenticated: the principal (`key:<key_id>`, a
 * token's `sub`, `cert:<CN>`, or `anonymous` with auth off) and its roles.
 * `AgentService` sees only the principal; the rest is for authorization,
 * rate limits and audit.
 */

export type CredentialKind = 'anonymous' | 'api_key' | 'jwt' | 'certificate';

export interface Principal {
  readonly id: string;
  /** Roles the credential carries; casbin adds those the policy's `g` lines give `id`. */
  readonly roles: readonly string[];
  readonly kind: CredentialKind;
  /** The API key the call was authenticated with (its own rate limit applies). */
  readonly keyId?: string;
  /** The key's own hourly rate; 0 means the server's `rate_limit_per_key`. */
  readonly keyRatePerHour?: number;
}

export const ANONYMOUS: Principal = { id: 'anonymous', roles: [], kind: 'anonymous' };

export function keyPrincipalId(keyId: string): string {
  return `key:${keyId}`;
}

export function certificatePrincipalId(commonName: string): string {
  return `cert:${commonName}`;
}
