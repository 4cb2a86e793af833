/**
 * Verified tokens, kept for their remaining lifetime so the hot path checks
 * a map instead of a signature. Bounded: past `capacity`, the oldest entry
 * goes (Map iteration order is insertion order).
 */
import type { Principal } from './principal.js';

export interface TokenCache {
  /** The principal of a token verified before and still valid at `now`. */
  get(token: string, now: number): Principal | undefined;
  set(token: string, principal: Principal, validUntil: number): void;
  readonly size: number;
}

export function createTokenCache(capacity: number): TokenCache {
  const entries = new Map<string, { principal: Principal; validUntil: number }>();
  return {
    get(token, now) {
      const entry = entries.get(token);
      if (entry === undefined) return undefined;
      if (now < entry.validUntil) return entry.principal;
      entries.delete(token);
      return undefined;
    },
    set(token, principal, validUntil) {
      if (entries.size >= capacity && !entries.has(token)) entries.delete(entries.keys().next().value as string);
      entries.set(token, { principal, validUntil });
    },
    get size() {
      return entries.size;
    },
  };
}
