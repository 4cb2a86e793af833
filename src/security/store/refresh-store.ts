/**
 * Refresh-token families at rest (tables `refresh_families`,
 * `refresh_tokens`): one family per credential exchange, one row per
 * refresh token it ever issued, each holding the sha256 of its secret.
 */
import type Database from 'better-sqlite3';

export interface FamilyRecord {
  familyId: string;
  principal: string;
  roles: string[];
  /** The API key the family was exchanged for, if any. */
  keyId: string | undefined;
  createdAt: number;
  expiresAt: number;
  revokedAt: number | undefined;
}

export interface RefreshTokenRecord {
  tokenId: string;
  familyId: string;
  tokenHash: string;
  issuedAt: number;
  usedAt: number | undefined;
}

export interface NewRefreshToken {
  tokenId: string;
  tokenHash: string;
  issuedAt: number;
}

export type RefreshUse = 'used' | 'already_used';

export interface RefreshStore {
  createFamily(family: Omit<FamilyRecord, 'revokedAt'>, first: NewRefreshToken): void;
  get(tokenId: string): { token: RefreshTokenRecord; family: FamilyRecord } | undefined;
  /**
   * Marks `tokenId` used and adds `next` to its family, in one transaction:
   * of two concurrent refreshes with one token, one wins and the other reads
   * `already_used`.
   */
  use(tokenId: string, now: number, next: NewRefreshToken | undefined): RefreshUse;
  revokeFamily(familyId: string, now: number, reason: string): void;
  /** Removes families that expired before `before`, with their tokens. */
  pruneExpired(before: number): number;
}

interface FamilyRow {
  family_id: string;
  principal: string;
  roles: string;
  key_id: string | null;
  created_at: number;
  expires_at: number;
  revoked_at: number | null;
}

interface TokenRow {
  token_id: string;
  family_id: string;
  token_hash: string;
  issued_at: number;
  used_at: number | null;
}

export function createRefreshStore(db: Database.Database): RefreshStore {
  const insertFamily = db.prepare(`INSERT INTO refresh_families (family_id, principal, roles, key_id, created_at, expires_at)
    VALUES (@family_id, @principal, @roles, @key_id, @created_at, @expires_at)`);
  const insertToken = db.prepare<[string, string, string, number]>('INSERT INTO refresh_tokens (token_id, family_id, token_hash, issued_at) VALUES (?, ?, ?, ?)');
  const selectToken = db.prepare<[string], TokenRow>('SELECT * FROM refresh_tokens WHERE token_id = ?');
  const selectFamily = db.prepare<[string], FamilyRow>('SELECT * FROM refresh_families WHERE family_id = ?');
  const markUsed = db.prepare<[number, string]>('UPDATE refresh_tokens SET used_at = ? WHERE token_id = ? AND used_at IS NULL');
  const revoke = db.prepare<[number, string, string]>('UPDATE refresh_families SET revoked_at = ?, revoked_reason = ? WHERE family_id = ? AND revoked_at IS NULL');
  const prune = db.prepare<[number]>('DELETE FROM refresh_families WHERE expires_at < ?');

  const create = db.transaction((family: Omit<FamilyRecord, 'revokedAt'>, first: NewRefreshToken) => {
    insertFamily.run({
      family_id: family.familyId,
      principal: family.principal,
      roles: JSON.stringify(family.roles),
      key_id: family.keyId ?? null,
      created_at: family.createdAt,
      expires_at: family.expiresAt,
    });
    insertToken.run(first.tokenId, family.familyId, first.tokenHash, first.issuedAt);
  }).immediate;

  const use = db.transaction((tokenId: string, now: number, next: NewRefreshToken | undefined): RefreshUse => {
    const row = selectToken.get(tokenId);
    if (row === undefined || markUsed.run(now, tokenId).changes === 0) return 'already_used';
    if (next !== undefined) insertToken.run(next.tokenId, row.family_id, next.tokenHash, next.issuedAt);
    return 'used';
  }).immediate;

  return {
    createFamily: (family, first) => create(family, first),
    get(tokenId) {
      const token = selectToken.get(tokenId);
      const family = token === undefined ? undefined : selectFamily.get(token.family_id);
      if (token === undefined || family === undefined) return undefined;
      return {
        token: { tokenId: token.token_id, familyId: token.family_id, tokenHash: token.token_hash, issuedAt: token.issued_at, usedAt: token.used_at ?? undefined },
        family: {
          familyId: family.family_id,
          principal: family.principal,
          roles: JSON.parse(family.roles) as string[],
          keyId: family.key_id ?? undefined,
          createdAt: family.created_at,
          expiresAt: family.expires_at,
          revokedAt: family.revoked_at ?? undefined,
        },
      };
    },
    use: (tokenId, now, next) => use(tokenId, now, next),
    revokeFamily(familyId, now, reason) {
      revoke.run(now, reason, familyId);
    },
    pruneExpired: (before) => prune.run(before).changes,
  };
}
