/**
 * API keys at rest (table `api_keys`): only the hash of salt + secret, and
 * during a rotation's grace period the previous hash beside it. Times are
 * epoch milliseconds.
 */
import type Database from 'better-sqlite3';

export interface KeyRecord {
  keyId: string;
  name: string;
  roles: string[];
  secretHash: string;
  previousHash: string | undefined;
  previousUntil: number | undefined;
  /** 0: the server's `rate_limit_per_key`. */
  rateLimitPerHour: number;
  createdAt: number;
  rotatedAt: number;
  expiresAt: number | undefined;
  revokedAt: number | undefined;
}

export type NewKey = Omit<KeyRecord, 'previousHash' | 'previousUntil' | 'revokedAt'>;

export interface KeyStore {
  /** False when the key id is taken. */
  insert(key: NewKey): boolean;
  get(keyId: string): KeyRecord | undefined;
  /** Every key, revoked ones included, oldest first. */
  list(): KeyRecord[];
  /** The current hash becomes the previous one, accepted until `previousUntil`. False for an unknown or revoked key. */
  rotate(keyId: string, secretHash: string, now: number, previousUntil: number): boolean;
  /** False for an unknown or already revoked key. */
  revoke(keyId: string, now: number): boolean;
  /** Creates the key or gives it this hash and these roles, unrevoked and without expiry. */
  upsert(key: NewKey): void;
}

interface KeyRow {
  key_id: string;
  name: string;
  roles: string;
  secret_hash: string;
  previous_hash: string | null;
  previous_until: number | null;
  rate_limit_per_hour: number;
  created_at: number;
  rotated_at: number;
  expires_at: number | null;
  revoked_at: number | null;
}

function fromRow(row: KeyRow): KeyRecord {
  return {
    keyId: row.key_id,
    name: row.name,
    roles: JSON.parse(row.roles) as string[],
    secretHash: row.secret_hash,
    previousHash: row.previous_hash ?? undefined,
    previousUntil: row.previous_until ?? undefined,
    rateLimitPerHour: row.rate_limit_per_hour,
    createdAt: row.created_at,
    rotatedAt: row.rotated_at,
    expiresAt: row.expires_at ?? undefined,
    revokedAt: row.revoked_at ?? undefined,
  };
}

function params(key: NewKey): Record<string, unknown> {
  return {
    key_id: key.keyId,
    name: key.name,
    roles: JSON.stringify(key.roles),
    secret_hash: key.secretHash,
    rate_limit_per_hour: key.rateLimitPerHour,
    created_at: key.createdAt,
    rotated_at: key.rotatedAt,
    expires_at: key.expiresAt ?? null,
  };
}

export function createKeyStore(db: Database.Database): KeyStore {
  const insert = db.prepare(`INSERT INTO api_keys (key_id, name, roles, secret_hash, rate_limit_per_hour, created_at, rotated_at, expires_at)
    VALUES (@key_id, @name, @roles, @secret_hash, @rate_limit_per_hour, @created_at, @rotated_at, @expires_at) ON CONFLICT (key_id) DO NOTHING`);
  const upsert = db.prepare(`INSERT INTO api_keys (key_id, name, roles, secret_hash, rate_limit_per_hour, created_at, rotated_at, expires_at)
    VALUES (@key_id, @name, @roles, @secret_hash, @rate_limit_per_hour, @created_at, @rotated_at, @expires_at)
    ON CONFLICT (key_id) DO UPDATE SET roles = excluded.roles, secret_hash = excluded.secret_hash, previous_hash = NULL, previous_until = NULL,
      rotated_at = excluded.rotated_at, expires_at = NULL, revoked_at = NULL
    WHERE api_keys.secret_hash <> excluded.secret_hash OR api_keys.roles <> excluded.roles OR api_keys.revoked_at IS NOT NULL OR api_keys.expires_at IS NOT NULL`);
  const select = db.prepare<[string], KeyRow>('SELECT * FROM api_keys WHERE key_id = ?');
  const selectAll = db.prepare<[], KeyRow>('SELECT * FROM api_keys ORDER BY created_at, key_id');
  const rotate = db.prepare<{ key_id: string; secret_hash: string; now: number; previous_until: number }>(`UPDATE api_keys
    SET previous_hash = secret_hash, previous_until = @previous_until, secret_hash = @secret_hash, rotated_at = @now
    WHERE key_id = @key_id AND revoked_at IS NULL`);
  const revoke = db.prepare<[number, string]>('UPDATE api_keys SET revoked_at = ? WHERE key_id = ? AND revoked_at IS NULL');

  return {
    insert: (key) => insert.run(params(key)).changes === 1,
    get(keyId) {
      const row = select.get(keyId);
      return row === undefined ? undefined : fromRow(row);
    },
    list: () => selectAll.all().map(fromRow),
    rotate: (keyId, secretHash, now, previousUntil) => rotate.run({ key_id: keyId, secret_hash: secretHash, now, previous_until: previousUntil }).changes === 1,
    revoke: (keyId, now) => revoke.run(now, keyId).changes === 1,
    upsert(key) {
      upsert.run(params(key));
    },
  };
}
