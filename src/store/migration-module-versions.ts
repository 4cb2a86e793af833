/**
 * Migration 4: module versions for hot updates (UpdateAgent). An agent keeps
 * the module it runs, numbered from 1 at deploy and raised by each update,
 * and the one it ran before, which a rollback brings back. Both modules stay
 * in `modules` while an agent references either; existing agents start at
 * version 1 with no previous module.
 */
export const MODULE_VERSIONS_MIGRATION = {
  version: 4,
  name: 'agent-module-versions',
  sql: `
    ALTER TABLE agents ADD COLUMN module_version INTEGER NOT NULL DEFAULT 1 CHECK (module_version >= 1);
    ALTER TABLE agents ADD COLUMN previous_module_sha256 TEXT REFERENCES modules (sha256);
    ALTER TABLE agents ADD COLUMN previous_module_version INTEGER;
    -- "Is this module still referenced?" looks at both columns.
    CREATE INDEX agents_by_previous_module ON agents (previous_module_sha256);
  `,
};
