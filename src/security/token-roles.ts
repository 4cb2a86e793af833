/**
 * Roles from a token's claim (`jwt_roles_claim`): an array of names or one
 * space-separated string; a dotted name reads a nested claim, as IdPs nest
 * them (Keycloak's `realm_access.roles`).
 */

export function rolesFromClaims(claims: Record<string, unknown>, claim: string): string[] {
  let value: unknown = claims;
  for (const part of claim.split('.')) {
    if (typeof value !== 'object' || value === null) return [];
    value = (value as Record<string, unknown>)[part];
  }
  if (typeof value === 'string') return value.split(/\s+/).filter((role) => role !== '');
  if (Array.isArray(value)) return value.filter((role): role is string => typeof role === 'string' && role !== '');
  return [];
}

/** The claims that carry `roles` under `claim`, nested as the dotted name says. */
export function rolesClaim(claim: string, roles: readonly string[]): Record<string, unknown> {
  const parts = claim.split('.');
  let value: unknown = [...roles];
  for (const part of parts.reverse()) value = { [part]: value };
  return value as Record<string, unknown>;
}
