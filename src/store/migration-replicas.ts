/**
 * Migration 3: modules held for other nodes of a cluster (replicas). A
 * module named here stays in `modules` while no local agent references it,
 * so the node can start that agent if its node dies.
 */
export const REPLICAS_MIGRATION = {
  version: 3,
  name: 'module-replicas',
  sql: `
    CREATE TABLE module_replicas (
      sha256     TEXT PRIMARY KEY REFERENCES modules (sha256),
      created_at INTEGER NOT NULL
    ) WITHOUT ROWID;
  `,
};
