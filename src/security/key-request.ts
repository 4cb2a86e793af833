/**
 * Validation of `CreateKeyRequest`, the same for both doors: every refusal
 * is INVALID_ARGUMENT naming the field and a reason.
 */
import { SvcError } from '../errors/svc-error.js';
import { illFormed, isWellFormed } from '../text/well-formed.js';

export const MAX_KEY_NAME_LENGTH = 256;
/** Roles one key may hold; a handful is the most any policy needs. */
export const MAX_KEY_ROLES = 32;
/** Ten years: a key that should outlive it should not expire. */
export const MAX_KEY_LIFETIME_SECONDS = 10 * 365 * 86_400;

// eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;
const ROLE = /^[A-Za-z0-9_.:-]{1,64}$/;

export interface ValidKeyRequest {
  name: string;
  roles: string[];
  /** Undefined: the key never expires. */
  expiresInMs: number | undefined;
  /** 0: the server's `rate_limit_per_key`. */
  rateLimitPerHour: number;
}

function invalid(field: string, message: string, reason: string): SvcError {
  return new SvcError('INVALID_ARGUMENT', message, { field, reason });
}

function wholeNumber(field: string, value: unknown, max: number): number {
  if (value === undefined || value === null || value === '') return 0;
  const number = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof number !== 'number' || !Number.isSafeInteger(number) || number < 0) throw invalid(field, `${field} must be a whole number >= 0`, 'wrong_type');
  if (number > max) throw invalid(field, `${field} must be at most ${max}`, 'out_of_range');
  return number;
}

/** `known` are the roles the policy defines: a key with a role nothing grants is a mistake worth refusing. */
export function validateKeyRequest(input: Record<string, unknown>, known: ReadonlySet<string>): ValidKeyRequest {
  const name = input.name;
  if (typeof name !== 'string' || name.trim() === '') throw invalid('name', 'name is required', 'required');
  if (name.length > MAX_KEY_NAME_LENGTH) throw invalid('name', `name exceeds ${MAX_KEY_NAME_LENGTH} characters`, 'too_long');
  if (CONTROL_CHARS.test(name)) throw invalid('name', 'name contains control characters', 'control_characters');
  if (!isWellFormed(name)) throw illFormed('name');
  const roles = input.roles ?? [];
  if (!Array.isArray(roles) || !roles.every((r): r is string => typeof r === 'string')) throw invalid('roles', 'roles must be a list of role names', 'wrong_type');
  if (roles.length > MAX_KEY_ROLES) throw invalid('roles', `a key holds at most ${MAX_KEY_ROLES} roles`, 'too_many');
  for (const role of roles) {
    if (!ROLE.test(role)) throw invalid('roles', `not a role name: ${JSON.stringify(role.slice(0, 64))}`, 'invalid_role');
    if (!known.has(role)) throw new SvcError('INVALID_ARGUMENT', `no role ${role} in the policy (roles: ${[...known].sort().join(', ')})`, { field: 'roles', reason: 'unknown_role', role });
  }
  const expiresIn = wholeNumber('expires_in', input.expires_in, MAX_KEY_LIFETIME_SECONDS);
  const rateLimitPerHour = wholeNumber('rate_limit_per_hour', input.rate_limit_per_hour, Number.MAX_SAFE_INTEGER);
  return { name, roles: [...new Set(roles)], expiresInMs: expiresIn === 0 ? undefined : expiresIn * 1000, rateLimitPerHour };
}
