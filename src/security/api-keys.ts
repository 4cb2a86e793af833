/**
 * API keys (DESIGN.md section 9): made, listed, revoked and rotated through
 * `/api/v1/keys`, checked on every call that carries one. The secret is
 * shown once, at creation or rotation; the store keeps the hash of salt +
 * secret. A rotated key's previous secret works for `grace_period`. With
 * `auto_rotate`, a secret older than `rotation_interval` works for
 * `grace_period` more and is then refused until the key is rotated.
 */
import { SvcError } from '../errors/svc-error.js';
import { formatKey, hashesEqual, hashSecret, keyIdOf, newKeyId, newSecret, parseKey, type HashAlgorithm } from './api-key-format.js';
import { keyPrincipalId, type Principal } from './principal.js';
import type { KeyRecord, KeyStore } from './store/key-store.js';
import type { WallClock } from './wall-clock.js';

/** Key records kept in memory between calls; a revocation or rotation through this service drops its entry. */
const CACHED_KEYS = 10_000;

export type KeyFailure = 'malformed' | 'unknown_key' | 'wrong_secret' | 'revoked' | 'expired' | 'grace_period_over' | 'rotation_overdue';

export type KeyCheck = { ok: true; principal: Principal } | { ok: false; reason: KeyFailure; keyId: string | undefined };

/** A key as listed: never a secret or a hash. Times are epoch milliseconds. */
export interface KeyView {
  key_id: string;
  name: string;
  roles: string[];
  created_at: number;
  expires_at: number | undefined;
  rotated_at: number;
  /** Until when the previous secret still works, after a rotation. */
  grace_until: number | undefined;
  revoked_at: number | undefined;
  rate_limit_per_hour: number;
}

export interface NewKeyInput {
  name: string;
  roles: string[];
  expiresInMs: number | undefined;
  rateLimitPerHour: number;
}

export interface ApiKeys {
  create(input: NewKeyInput): { key: KeyView; apiKey: string };
  list(): KeyView[];
  /** NOT_FOUND for an unknown key; revoking a revoked key changes nothing. */
  revoke(keyId: string): KeyView;
  /** A new secret; the old one works for `grace_period`. NOT_FOUND for an unknown or revoked key. */
  rotate(keyId: string): { key: KeyView; apiKey: string };
  check(text: string): KeyCheck;
  /** The roles of a key still in force (by id alone, for a token family made from it), or why it is not. */
  roles(keyId: string): readonly string[] | 'revoked' | 'expired' | 'rotation_overdue';
  /** Makes sure `text` (a whole key) exists as an admin key with that secret. Throws for a malformed key. */
  ensureAdmin(text: string, name: string): void;
  /** With auto_rotate: the keys in their last `grace_period` before they are refused for want of rotation. */
  dueForRotation(): KeyView[];
}

export interface ApiKeysOptions {
  store: KeyStore;
  clock: WallClock;
  salt: string;
  hashAlgorithm: HashAlgorithm;
  gracePeriodMs: number;
  autoRotate: boolean;
  rotationIntervalMs: number;
}

function view(record: KeyRecord, now: number): KeyView {
  return {
    key_id: record.keyId,
    name: record.name,
    roles: record.roles,
    created_at: record.createdAt,
    expires_at: record.expiresAt,
    rotated_at: record.rotatedAt,
    grace_until: record.previousUntil !== undefined && record.previousUntil > now ? record.previousUntil : undefined,
    revoked_at: record.revokedAt,
    rate_limit_per_hour: record.rateLimitPerHour,
  };
}

function notFound(keyId: string): SvcError {
  return new SvcError('NOT_FOUND', `key ${keyId} not found`, { key_id: keyId });
}

export function createApiKeys(options: ApiKeysOptions): ApiKeys {
  const { store, clock } = options;
  const cache = new Map<string, KeyRecord>();
  const hash = (secret: string): string => hashSecret(options.hashAlgorithm, options.salt, secret);

  function lookup(keyId: string): KeyRecord | undefined {
    const cached = cache.get(keyId);
    if (cached !== undefined) return cached;
    const record = store.get(keyId);
    if (record === undefined) return undefined;
    if (cache.size >= CACHED_KEYS) cache.delete(cache.keys().next().value as string);
    cache.set(keyId, record);
    return record;
  }

  function fresh(keyId: string): KeyRecord | undefined {
    cache.delete(keyId);
    return lookup(keyId);
  }

  function refusal(reason: KeyFailure, keyId: string): KeyCheck {
    return { ok: false, reason, keyId };
  }

  return {
    create(input) {
      const now = clock.now();
      const secret = newSecret();
      const keyId = newKeyId();
      const inserted = store.insert({
        keyId,
        name: input.name,
        roles: input.roles,
        secretHash: hash(secret),
        rateLimitPerHour: input.rateLimitPerHour,
        createdAt: now,
        rotatedAt: now,
        expiresAt: input.expiresInMs === undefined ? undefined : now + input.expiresInMs,
      });
      // 80 random bits: a clash means a broken random source, not bad luck.
      if (!inserted) throw new SvcError('INTERNAL', 'internal error');
      return { key: view(fresh(keyId) as KeyRecord, now), apiKey: formatKey(keyId, secret) };
    },

    list() {
      const now = clock.now();
      return store.list().map((record) => view(record, now));
    },

    revoke(keyId) {
      const now = clock.now();
      store.revoke(keyId, now);
      const record = fresh(keyId);
      if (record === undefined) throw notFound(keyId);
      return view(record, now);
    },

    rotate(keyId) {
      const now = clock.now();
      const secret = newSecret();
      if (!store.rotate(keyId, hash(secret), now, now + options.gracePeriodMs)) throw notFound(keyId);
      return { key: view(fresh(keyId) as KeyRecord, now), apiKey: formatKey(keyId, secret) };
    },

    check(text) {
      const parsed = parseKey(text);
      if (parsed === undefined) return { ok: false, reason: 'malformed', keyId: keyIdOf(text) };
      const { keyId } = parsed;
      const record = lookup(keyId);
      if (record === undefined) return refusal('unknown_key', keyId);
      const now = clock.now();
      const digest = hash(parsed.secret);
      const current = hashesEqual(digest, record.secretHash);
      const previous = !current && record.previousHash !== undefined && hashesEqual(digest, record.previousHash);
      if (!current && !previous) return refusal('wrong_secret', keyId);
      if (record.revokedAt !== undefined) return refusal('revoked', keyId);
      if (record.expiresAt !== undefined && now >= record.expiresAt) return refusal('expired', keyId);
      if (previous && (record.previousUntil === undefined || now >= record.previousUntil)) return refusal('grace_period_over', keyId);
      if (options.autoRotate && now >= record.rotatedAt + options.rotationIntervalMs + options.gracePeriodMs) return refusal('rotation_overdue', keyId);
      return {
        ok: true,
        principal: { id: keyPrincipalId(keyId), roles: record.roles, kind: 'api_key', keyId, keyRatePerHour: record.rateLimitPerHour },
      };
    },

    roles(keyId) {
      const record = lookup(keyId);
      const now = clock.now();
      if (record === undefined || record.revokedAt !== undefined) return 'revoked';
      if (record.expiresAt !== undefined && now >= record.expiresAt) return 'expired';
      if (options.autoRotate && now >= record.rotatedAt + options.rotationIntervalMs + options.gracePeriodMs) return 'rotation_overdue';
      return record.roles;
    },

    ensureAdmin(text, name) {
      const parsed = parseKey(text);
      if (parsed === undefined) throw new Error('not a key of the form svc_<key_id>_<secret> (a key id is 16 characters of a-z and 2-7, a secret 43 base64url characters)');
      const now = clock.now();
      store.upsert({ keyId: parsed.keyId, name, roles: ['admin'], secretHash: hash(parsed.secret), rateLimitPerHour: 0, createdAt: now, rotatedAt: now, expiresAt: undefined });
      cache.delete(parsed.keyId);
    },

    dueForRotation() {
      if (!options.autoRotate) return [];
      const now = clock.now();
      const { rotationIntervalMs, gracePeriodMs } = options;
      return store
        .list()
        .filter((r) => r.revokedAt === undefined && now - r.rotatedAt >= rotationIntervalMs && now - r.rotatedAt < rotationIntervalMs + gracePeriodMs)
        .map((record) => view(record, now));
    },
  };
}
