/**
 * What the data directory knows about its store, kept outside the database in
 * `svc.identity`: the node id and how many deploys and undeploys the store
 * acknowledged. The database counts the same in `meta` (meta-keys.ts), in the
 * transaction of each change; this copy is written just after each commit.
 * At start the two are compared (store-verdict.ts): a database that holds
 * less than the directory recorded lost acknowledged changes (an emptied or
 * replaced file, a damaged write-ahead log), and the server refuses to start.
 *
 * The file is one fixed-size record rewritten in place with one positional
 * write: it never grows after creation, so it can still be written on a full
 * disk, and a process killed mid-way leaves the old record or the new one.
 * It is not fsynced: after a power loss it can only be behind the database
 * (written after the database's synced commit), which the comparison accepts.
 */
import { closeSync, existsSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export const IDENTITY_FILE = 'svc.identity';
/** Record size; a node id is a UUID, so a record is about 120 bytes. */
const RECORD_BYTES = 256;

export interface DataDirIdentity {
  nodeId: string;
  acknowledgedDeploys: number;
  acknowledgedUndeploys: number;
}

export type IdentityReading = { state: 'absent' } | { state: 'unreadable'; problem: string } | { state: 'present'; identity: DataDirIdentity };

const isCount = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;

export function identityPath(dataDir: string): string {
  return join(dataDir, IDENTITY_FILE);
}

export function readIdentity(dataDir: string): IdentityReading {
  const path = identityPath(dataDir);
  if (!existsSync(path)) return { state: 'absent' };
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    return { state: 'unreadable', problem: error instanceof Error ? error.message : String(error) };
  }
  const { node_id: nodeId, acknowledged_deploys: deploys, acknowledged_undeploys: undeploys } = (value ?? {}) as Record<string, unknown>;
  if (typeof nodeId !== 'string' || nodeId === '' || !isCount(deploys) || !isCount(undeploys)) {
    return { state: 'unreadable', problem: 'it does not hold a node id and two counts' };
  }
  return { state: 'present', identity: { nodeId, acknowledgedDeploys: deploys, acknowledgedUndeploys: undeploys } };
}

function record(identity: DataDirIdentity): Buffer {
  const text = JSON.stringify({
    node_id: identity.nodeId,
    acknowledged_deploys: identity.acknowledgedDeploys,
    acknowledged_undeploys: identity.acknowledgedUndeploys,
  });
  if (Buffer.byteLength(text) >= RECORD_BYTES) throw new RangeError(`node id too long for ${IDENTITY_FILE}: ${identity.nodeId}`);
  // JSON ignores the padding; the newline keeps `cat` tidy.
  return Buffer.from(`${text.padEnd(RECORD_BYTES - 1, ' ')}\n`);
}

export interface IdentityFile {
  /** Rewrites the record in place; throws what the write throws. */
  write(identity: DataDirIdentity): void;
  /** Idempotent. */
  close(): void;
}

/** Opens (creating when absent) the directory's identity file and writes `identity` to it. */
export function openIdentityFile(dataDir: string, identity: DataDirIdentity): IdentityFile {
  const path = identityPath(dataDir);
  const fd = openSync(path, existsSync(path) ? 'r+' : 'w+', 0o644);
  let open = true;
  const file: IdentityFile = {
    write(next) {
      writeSync(fd, record(next), 0, RECORD_BYTES, 0);
    },
    close() {
      if (!open) return;
      open = false;
      closeSync(fd);
    },
  };
  try {
    file.write(identity);
  } catch (error) {
    file.close();
    throw error;
  }
  return file;
}
