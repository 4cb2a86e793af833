/**
 * Whether the store found at start is the one the data directory had, from
 * what the directory recorded (data-dir-identity.ts) and what the database
 * holds. Pure, so every case is a row of a table test. The rule: a store that
 * holds less than the directory recorded as acknowledged (missing, empty,
 * another node's, fewer deploys or undeploys) is refused, naming what was
 * found; `svc start --recover` accepts it as it is.
 */
import type { DataDirIdentity, IdentityReading } from './data-dir-identity.js';

/** What is at `svc.db` before it is opened, and once opened what it holds. */
export type StoreFile = { state: 'missing' } | { state: 'empty' } | { state: 'present'; facts: StoreFacts };

export interface StoreFacts {
  /** Undefined in a database no server has started on yet. */
  nodeId: string | undefined;
  acknowledgedDeploys: number;
  acknowledgedUndeploys: number;
  agents: number;
}

export type Verdict = { kind: 'accept'; note?: string } | { kind: 'refuse'; finding: string };

const agentsOf = (identity: DataDirIdentity): number => identity.acknowledgedDeploys - identity.acknowledgedUndeploys;

function recorded(identity: DataDirIdentity): string {
  const agents = agentsOf(identity);
  return `this data directory recorded ${agents} agent${agents === 1 ? '' : 's'} (${identity.acknowledgedDeploys} deploys and ${identity.acknowledgedUndeploys} undeploys acknowledged) on node ${identity.nodeId}`;
}

export function judgeStore(reading: IdentityReading, file: StoreFile): Verdict {
  if (reading.state === 'absent') return { kind: 'accept', note: 'no svc.identity yet: recorded from the store' };
  if (reading.state === 'unreadable') return { kind: 'refuse', finding: `svc.identity could not be read (${reading.problem})` };
  const { identity } = reading;
  if (file.state !== 'present') {
    if (agentsOf(identity) === 0) return { kind: 'accept' };
    return { kind: 'refuse', finding: `svc.db is ${file.state === 'missing' ? 'missing' : 'empty (0 bytes)'}, but ${recorded(identity)}` };
  }
  const { facts } = file;
  if (facts.nodeId !== undefined && facts.nodeId !== identity.nodeId) {
    return { kind: 'refuse', finding: `svc.db belongs to node ${facts.nodeId}, but ${recorded(identity)}` };
  }
  const lostDeploys = identity.acknowledgedDeploys - facts.acknowledgedDeploys;
  const lostUndeploys = identity.acknowledgedUndeploys - facts.acknowledgedUndeploys;
  if (lostDeploys > 0 || lostUndeploys > 0) {
    const missing = [lostDeploys > 0 ? `${lostDeploys} deploys` : '', lostUndeploys > 0 ? `${lostUndeploys} undeploys` : ''].filter((s) => s !== '').join(' and ');
    return {
      kind: 'refuse',
      finding:
        `svc.db holds ${facts.agents} agents after ${facts.acknowledgedDeploys} deploys and ${facts.acknowledgedUndeploys} undeploys, but ${recorded(identity)}: ` +
        `${missing} acknowledged earlier are missing (a replaced or truncated file, or a damaged write-ahead log)`,
    };
  }
  return { kind: 'accept' };
}

/** The refusal as the operator reads it: what was found, why the server stops, and how to go on. */
export function refusalMessage(finding: string): string {
  return (
    `${finding}. The server refuses to start so that no acknowledged change is lost silently: ` +
    'restore svc.db (and its svc.db-wal file) from a backup, or start once with `svc start --recover` to accept the store as it is'
  );
}
