/**
 * The SQLite store: one file under the data dir holding agents, their modules
 * (stored once by sha256) and a little key/value metadata. better-sqlite3 is
 * synchronous on purpose: a deploy's write takes well under a millisecond, less
 * than an async round trip to a thread pool would cost.
 */
import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { AGENT_COLUMNS, FROM_AGENTS, fromRow, toInsertParams, type AgentRow } from './agent-row.js';
import { META_KEYS } from './meta-keys.js';
import { migrate } from './migrations.js';
import { decodePageToken, encodePageToken } from './page-token.js';
import { StoreError } from './store-error.js';
import type { AgentPage, AgentPatch, AgentRecord, DeleteResult, ListOptions, ModuleChange, NewAgent, Store } from './types.js';

export interface StoreOptions {
  dataDir: string;
  fileName?: string;
  /** See `DEFAULT_SYNCHRONOUS`; 'normal' is for the benchmark behind that choice and for tests that only seed data. */
  synchronous?: SynchronousMode;
}

export type SynchronousMode = 'normal' | 'full';

/**
 * FULL: in WAL mode it fsyncs the log on every commit, so an acknowledged
 * deploy survives power loss and a kernel crash, not only the death of the
 * process (all NORMAL promises in WAL mode). Measured on this machine (2 cores,
 * ext4 on virtio, 12 KiB module, 2,000 puts, test/store/put-agent.bench.ts):
 *   FULL    new module p50 0.24–0.30 ms, p99 2.8–3.4 ms; same module p50 0.18–0.24 ms, p99 0.4–1.0 ms
 *   NORMAL  new module p50 0.06–0.07 ms, p99 4.3–4.9 ms; same module p50 0.04 ms,      p99 0.3 ms
 * The p99 is the WAL auto-checkpoint (every 1000 pages, about 80 deploys of new
 * modules). FULL costs ~0.2 ms a deploy against a 5 ms p50 budget, so we pay it.
 */
export const DEFAULT_SYNCHRONOUS: SynchronousMode = 'full';
/** How long a write waits for another connection's lock (a second process, a backup) before SQLITE_BUSY. */
export const BUSY_TIMEOUT_MS = 5_000;
export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 1_000;
/** Rows fetched per step of `allAgents`; no cursor stays open between steps. */
const RESTORE_BATCH = 500;
/** Findings of `quick_check` kept: the first few say where the damage is; thousands more say nothing new. */
const MAX_INTEGRITY_FINDINGS = 10;

export function createStore(options: StoreOptions): Store {
  mkdirSync(options.dataDir, { recursive: true });
  const path = resolve(join(options.dataDir, options.fileName ?? 'svc.db'));
  const db = open(path, options.synchronous ?? DEFAULT_SYNCHRONOUS);

  const insertModule = db.prepare('INSERT INTO modules (sha256, bytes, size, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (sha256) DO NOTHING');
  const insertAgent = db.prepare(`INSERT INTO agents
    (agent_id, name, capabilities, resources, module_sha256, desired_state, restart_count, node_id, created_at, updated_at)
    VALUES (@agent_id, @name, @capabilities, @resources, @module_sha256, @desired_state, 0, @node_id, @created_at, @created_at)`);
  const selectAgent = db.prepare<[string], AgentRow>(
    `SELECT ${AGENT_COLUMNS} FROM ${FROM_AGENTS} WHERE a.agent_id = ?`,
  );
  const firstPage = db.prepare<[number], AgentRow>(
    `SELECT ${AGENT_COLUMNS} FROM ${FROM_AGENTS}
     ORDER BY a.created_at, a.agent_id LIMIT ?`,
  );
  const nextPage = db.prepare<[number, string, number], AgentRow>(
    `SELECT ${AGENT_COLUMNS} FROM ${FROM_AGENTS}
     WHERE (a.created_at, a.agent_id) > (?, ?) ORDER BY a.created_at, a.agent_id LIMIT ?`,
  );
  const countAll = db.prepare<[], number>('SELECT count(*) FROM agents').pluck();
  const updateAgentRow = db.prepare<[number | null, string | null, number, string]>(
    `UPDATE agents SET restart_count = coalesce(?, restart_count), desired_state = coalesce(?, desired_state), updated_at = ?
     WHERE agent_id = ?`,
  );
  const modulesOf = db.prepare<[string], { module_sha256: string; previous_module_sha256: string | null }>(
    'SELECT module_sha256, previous_module_sha256 FROM agents WHERE agent_id = ?',
  );
  const deleteAgentRow = db.prepare('DELETE FROM agents WHERE agent_id = ?');
  // A module stays while an agent runs it or may roll back to it, or this node holds it for another node.
  const deleteUnreferencedModule = db.prepare<{ sha256: string }>(
    `DELETE FROM modules WHERE sha256 = @sha256 AND NOT EXISTS (SELECT 1 FROM agents WHERE module_sha256 = @sha256 OR previous_module_sha256 = @sha256)
     AND NOT EXISTS (SELECT 1 FROM module_replicas WHERE sha256 = @sha256)`,
  );
  const changeModuleRow = db.prepare(`UPDATE agents SET
      module_sha256 = @module_sha256, module_version = @module_version,
      previous_module_sha256 = @previous_module_sha256, previous_module_version = @previous_module_version,
      capabilities = @capabilities, resources = @resources, updated_at = @updated_at
    WHERE agent_id = @agent_id`);
  const insertReplica = db.prepare('INSERT INTO module_replicas (sha256, created_at) VALUES (?, ?) ON CONFLICT (sha256) DO NOTHING');
  const selectReplicas = db.prepare<[], string>('SELECT sha256 FROM module_replicas ORDER BY sha256').pluck();
  const deleteReplica = db.prepare('DELETE FROM module_replicas WHERE sha256 = ?');
  const hasModuleRow = db.prepare<[string], number>('SELECT 1 FROM modules WHERE sha256 = ?').pluck();
  const selectModule = db.prepare<[string], Buffer>('SELECT bytes FROM modules WHERE sha256 = ?').pluck();
  const selectMeta = db.prepare<[string], string>('SELECT value FROM meta WHERE key = ?').pluck();
  const upsertMeta = db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value');
  const countAcknowledged = db.prepare("INSERT INTO meta (key, value) VALUES (?, '1') ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1");
  const quickCheck = db.prepare<[], string>(`PRAGMA quick_check(${MAX_INTEGRITY_FINDINGS})`).pluck();

  // IMMEDIATE takes the write lock up front, so a transaction that reads before
  // it writes cannot fail half-way on a lock upgrade; it waits BUSY_TIMEOUT_MS instead.
  const putTx = db.transaction((agent: NewAgent, bytes: Uint8Array, sha256: string) => {
    insertModule.run(sha256, bytes, bytes.byteLength, agent.createdAt);
    insertAgent.run(toInsertParams(agent, sha256));
    countAcknowledged.run(META_KEYS.acknowledgedDeploys);
  }).immediate;

  const deleteTx = db.transaction((agentId: string): DeleteResult => {
    const modules = modulesOf.get(agentId);
    if (modules === undefined) throw notFound(agentId);
    const { module_sha256: moduleSha256, previous_module_sha256: previous } = modules;
    deleteAgentRow.run(agentId);
    countAcknowledged.run(META_KEYS.acknowledgedUndeploys);
    const moduleCollected = deleteUnreferencedModule.run({ sha256: moduleSha256 }).changes > 0;
    const previousCollected = previous !== null && deleteUnreferencedModule.run({ sha256: previous }).changes > 0;
    return previousCollected ? { moduleSha256, moduleCollected, previousCollected: previous } : { moduleSha256, moduleCollected };
  }).immediate;

  const changeModuleTx = db.transaction((agentId: string, change: ModuleChange): AgentRecord => {
    const row = selectAgent.get(agentId);
    if (row === undefined) throw notFound(agentId);
    const before = fromRow(row);
    if (change.module?.bytes !== undefined) insertModule.run(change.module.sha256, change.module.bytes, change.module.bytes.byteLength, change.updatedAt);
    const module = change.module ?? { sha256: before.moduleSha256, version: before.moduleVersion };
    const previous = change.previousModule === undefined ? before.previousModule : change.previousModule;
    const resources = change.resources ?? before.resources;
    changeModuleRow.run({
      agent_id: agentId,
      module_sha256: module.sha256,
      module_version: module.version,
      previous_module_sha256: previous?.sha256 ?? null,
      previous_module_version: previous?.version ?? null,
      capabilities: JSON.stringify(change.capabilities ?? before.capabilities),
      resources: JSON.stringify({ memory_limit: resources.memoryLimit, cpu_shares: resources.cpuShares }),
      updated_at: change.updatedAt,
    });
    for (const sha256 of [before.moduleSha256, before.previousModule?.sha256]) if (sha256 !== undefined) deleteUnreferencedModule.run({ sha256 });
    return fromRow(selectAgent.get(agentId) as AgentRow);
  }).immediate;

  const putReplicaTx = db.transaction((bytes: Uint8Array, sha256: string, now: number) => {
    insertModule.run(sha256, bytes, bytes.byteLength, now);
    insertReplica.run(sha256, now);
  }).immediate;

  const dropReplicaTx = db.transaction((sha256: string) => {
    deleteReplica.run(sha256);
    deleteUnreferencedModule.run({ sha256 });
  }).immediate;

  function page(after: { createdAt: number; agentId: string } | undefined, limit: number): AgentRecord[] {
    const rows = after === undefined ? firstPage.all(limit) : nextPage.all(after.createdAt, after.agentId, limit);
    return rows.map(fromRow);
  }

  return {
    path,

    putAgentWithModule(agent, moduleBytes) {
      const sha256 = createHash('sha256').update(moduleBytes).digest('hex');
      try {
        putTx(agent, moduleBytes, sha256);
      } catch (err) {
        throw conflictOr(err, agent);
      }
      return {
        agentId: agent.agentId,
        name: agent.name,
        capabilities: [...agent.capabilities],
        resources: { ...agent.resources },
        desiredState: agent.desiredState,
        nodeId: agent.nodeId,
        createdAt: agent.createdAt,
        moduleSha256: sha256,
        moduleSize: moduleBytes.byteLength,
        moduleVersion: 1,
        previousModule: null,
        restartCount: 0,
        updatedAt: agent.createdAt,
      };
    },

    getAgent(agentId) {
      const row = selectAgent.get(agentId);
      return row === undefined ? undefined : fromRow(row);
    },

    listAgents(listOptions: ListOptions = {}): AgentPage {
      const size = pageSize(listOptions.pageSize);
      const after = listOptions.pageToken ? decodePageToken(listOptions.pageToken) : undefined;
      // One extra row tells whether another page follows, so the last page carries no token.
      const agents = page(after, size + 1);
      const more = agents.length > size;
      if (more) agents.length = size;
      const last = agents.at(-1);
      return { agents, nextPageToken: more && last ? encodePageToken(last) : '' };
    },

    *allAgents() {
      let after: AgentRecord | undefined;
      while (true) {
        const batch = page(after, RESTORE_BATCH);
        yield* batch;
        if (batch.length < RESTORE_BATCH) return;
        after = batch.at(-1);
      }
    },

    countAgents() {
      return countAll.get() ?? 0;
    },

    updateAgent(agentId, patch: AgentPatch) {
      const result = updateAgentRow.run(patch.restartCount ?? null, patch.desiredState ?? null, patch.updatedAt, agentId);
      if (result.changes === 0) throw notFound(agentId);
    },

    deleteAgent(agentId) {
      return deleteTx(agentId);
    },

    changeModule(agentId, change) {
      return changeModuleTx(agentId, change);
    },

    getModule(sha256) {
      return selectModule.get(sha256);
    },

    putReplica(moduleBytes, now) {
      const sha256 = createHash('sha256').update(moduleBytes).digest('hex');
      putReplicaTx(moduleBytes, sha256, now);
      return sha256;
    },

    hasModule(sha256) {
      return hasModuleRow.get(sha256) !== undefined;
    },

    replicas() {
      return selectReplicas.all();
    },

    dropReplica(sha256) {
      dropReplicaTx(sha256);
    },

    getMeta(key) {
      return selectMeta.get(key);
    },

    setMeta(key, value) {
      upsertMeta.run(key, value);
    },

    quickCheck() {
      const findings = quickCheck.all();
      if (findings.length === 1 && findings[0] === 'ok') return [];
      // One finding a line, without SQLite's "*** in database main ***" heading.
      return findings.flatMap((f) => f.split('\n')).filter((line) => line !== '' && !line.startsWith('*** in database'));
    },

    close() {
      db.close();
    },
  };
}

/** Opens and configures the connection and migrates the schema; maps a damaged file to `corrupt`. */
function open(path: string, synchronous: SynchronousMode): Database.Database {
  let db: Database.Database | undefined;
  try {
    db = new Database(path, { timeout: BUSY_TIMEOUT_MS });
    // WAL: readers never block the writer, and a commit appends to one file.
    const mode = db.pragma('journal_mode = WAL', { simple: true });
    if (mode !== 'wal') throw new Error(`${path}: cannot use WAL journal mode (got ${String(mode)})`);
    db.pragma(`synchronous = ${synchronous.toUpperCase()}`);
    // Off by default in SQLite, per connection; keeps agents from pointing at a missing module.
    db.pragma('foreign_keys = ON');
    migrate(db);
    return db;
  } catch (err) {
    db?.close();
    if (err instanceof Database.SqliteError && (err.code === 'SQLITE_NOTADB' || err.code.startsWith('SQLITE_CORRUPT'))) {
      throw new StoreError('corrupt', `${path} is not a readable svc database: ${err.message}`, { path }, { cause: err });
    }
    throw err;
  }
}

function pageSize(requested: number | undefined): number {
  if (requested === undefined || requested === 0) return DEFAULT_PAGE_SIZE;
  if (!Number.isSafeInteger(requested) || requested < 0) throw new RangeError(`page size must be a non-negative integer, got ${requested}`);
  return Math.min(requested, MAX_PAGE_SIZE);
}

function notFound(agentId: string): StoreError {
  return new StoreError('not_found', `no agent ${agentId}`, { agent_id: agentId });
}

/** A unique-constraint failure on insert is a taken name or id; anything else passes through. */
function conflictOr(err: unknown, agent: NewAgent): unknown {
  if (!(err instanceof Database.SqliteError)) return err;
  if (err.code === 'SQLITE_CONSTRAINT_UNIQUE' && err.message.includes('agents.name')) {
    return new StoreError('conflict', `an agent named "${agent.name}" already exists`, { field: 'name', name: agent.name }, { cause: err });
  }
  if (err.code === 'SQLITE_CONSTRAINT_PRIMARYKEY' && err.message.includes('agents.agent_id')) {
    return new StoreError('conflict', `agent ${agent.agentId} already exists`, { field: 'agent_id', agent_id: agent.agentId }, { cause: err });
  }
  return err;
}
