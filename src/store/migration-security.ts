/**
 * Migration 2: the tables of DESIGN.md section 9 — API keys, refresh-token
 * families and the audit log — in the same SQLite file as the agents
 * (DESIGN.md section 1: the store holds agents, modules, keys, audit).
 * Secrets are never stored: a key holds the hash of salt + secret, a
 * refresh token the sha256 of its secret.
 */
export const SECURITY_MIGRATION = {
  version: 2,
  name: 'keys-refresh-tokens-audit',
  sql: `
    CREATE TABLE api_keys (
      key_id              TEXT PRIMARY KEY,
      name                TEXT NOT NULL,
      roles               TEXT NOT NULL CHECK (json_valid(roles)),
      secret_hash         TEXT NOT NULL,
      -- The secret before the last rotation, accepted until previous_until.
      previous_hash       TEXT,
      previous_until      INTEGER,
      -- 0: the server's rate_limit_per_key.
      rate_limit_per_hour INTEGER NOT NULL DEFAULT 0 CHECK (rate_limit_per_hour >= 0),
      created_at          INTEGER NOT NULL,
      -- When the current secret was made (creation or last rotation).
      rotated_at          INTEGER NOT NULL,
      expires_at          INTEGER,
      revoked_at          INTEGER
    );
    CREATE TABLE refresh_families (
      family_id  TEXT PRIMARY KEY,
      principal  TEXT NOT NULL,
      roles      TEXT NOT NULL CHECK (json_valid(roles)),
      -- The API key the family was exchanged for, if any: refreshing stops with the key.
      key_id     TEXT,
      created_at INTEGER NOT NULL,
      expires_at INTEGER NOT NULL,
      revoked_at INTEGER,
      revoked_reason TEXT
    );
    CREATE TABLE refresh_tokens (
      token_id   TEXT PRIMARY KEY,
      family_id  TEXT NOT NULL REFERENCES refresh_families (family_id) ON DELETE CASCADE,
      token_hash TEXT NOT NULL,
      issued_at  INTEGER NOT NULL,
      used_at    INTEGER
    );
    CREATE INDEX refresh_tokens_by_family ON refresh_tokens (family_id);
    CREATE INDEX refresh_families_by_expiry ON refresh_families (expires_at);
    CREATE TABLE audit_log (
      id         INTEGER PRIMARY KEY,
      time       INTEGER NOT NULL,
      event      TEXT NOT NULL,
      outcome    TEXT NOT NULL,
      principal  TEXT NOT NULL,
      roles      TEXT NOT NULL CHECK (json_valid(roles)),
      source_ip  TEXT NOT NULL,
      user_agent TEXT NOT NULL,
      operation  TEXT NOT NULL,
      resource   TEXT NOT NULL,
      trace_id   TEXT NOT NULL,
      reason     TEXT NOT NULL
    );
    CREATE INDEX audit_by_time ON audit_log (time);
    CREATE INDEX audit_by_event ON audit_log (event, time);
    CREATE INDEX audit_by_principal ON audit_log (principal, time);
  `,
} as const;
