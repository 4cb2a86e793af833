/**
 * The store as the server uses it: the SQLite store (store.ts) behind one
 * rule for every operation. A failure that is the storage's fault (a full
 * disk, a read-only or damaged file, an I/O error; storage-fault.ts) is
 * thrown as a `StoreError` of its kind, logged with its cause when the store
 * goes from writable to faulted, and remembered: `status()` then answers
 * not writable, which /ready reports. Each store write is one SQLite
 * transaction, so a failed one changed nothing.
 *
 * Recovery is noticed without a write per probe: while faulted, `status()`
 * tries one small write at most every `WRITE_CHECK_INTERVAL_MS` on the
 * injected clock, and any write that succeeds (a client's or the check)
 * clears the fault. A store SQLite opened read-only (the file was not
 * writable at start) stays read-only, so its check reopens the file first.
 * A damaged database stays faulted until an operator restarts the server
 * (open-store.ts checks it then).
 *
 * After each acknowledged deploy and undeploy the data directory's copy of
 * the counts is rewritten (data-dir-identity.ts).
 */
import type { Clock } from '../../supervisors/index.js';
import type { DataDirIdentity, IdentityFile } from './data-dir-identity.js';
import { META_KEYS } from './meta-keys.js';
import { asStorageFault } from './storage-fault.js';
import { StoreError, isStorageFault, type StorageFaultKind } from './store-error.js';
import type { StoreLog } from './store-log.js';
import type { Store } from './types.js';

/** How often a faulted store tries a write to see whether it can write again. */
export const WRITE_CHECK_INTERVAL_MS = 1_000;

/** The public reason of each fault (docs/api.md, docs/operations.md). */
export type StorageFaultReason = `storage_${StorageFaultKind}`;

export interface StorageStatus {
  readonly writable: boolean;
  /** Why not, when not. */
  readonly reason?: StorageFaultReason;
}

export interface GuardedStore extends Store {
  /** This data directory's node id (meta-keys.ts). */
  readonly nodeId: string;
  /** Whether the store can write, as its last write or write check found; may run a due write check. */
  status(): StorageStatus;
}

export interface GuardedStoreOptions {
  /** The opened, checked store. */
  store: Store;
  /** Opens the same file again, for a store that SQLite opened read-only. */
  reopen: () => Store;
  /** What the data directory recorded, equal to the store's counts. */
  identity: DataDirIdentity;
  identityFile: IdentityFile;
  clock: Clock;
  log: StoreLog;
}

interface Fault {
  kind: StorageFaultKind;
  since: number;
  failures: number;
}

export function createGuardedStore(options: GuardedStoreOptions): GuardedStore {
  const { clock, log, identityFile } = options;
  const identity: DataDirIdentity = { ...options.identity };
  let inner = options.store;
  let fault: Fault | undefined;
  let lastCheck = Number.NEGATIVE_INFINITY;

  function failed(operation: string, error: unknown): unknown {
    const mapped = asStorageFault(error);
    if (!isStorageFault(mapped)) return mapped;
    if (fault?.kind === mapped.kind) {
      fault.failures += 1;
    } else {
      // Once per change of state: a client retrying against a full disk must not flood the log.
      log.error({ operation, reason: `storage_${mapped.kind}`, path: inner.path, err: mapped.cause }, 'the store cannot write');
      fault = { kind: mapped.kind, since: clock.now(), failures: 1 };
    }
    return mapped;
  }

  function wrote(): void {
    if (fault === undefined || fault.kind === 'corrupt') return;
    log.info({ reason: `storage_${fault.kind}`, failed_operations: fault.failures, faulted_ms: clock.now() - fault.since }, 'the store can write again');
    fault = undefined;
  }

  function read<T>(operation: string, run: () => T): T {
    try {
      return run();
    } catch (error) {
      throw failed(operation, error);
    }
  }

  function write<T>(operation: string, run: () => T): T {
    const result = read(operation, run);
    wrote();
    return result;
  }

  function recordIdentity(): void {
    try {
      identityFile.write(identity);
    } catch (error) {
      // The change is committed and stays acknowledged; the record only lags, which the check at start accepts.
      log.error({ err: error, ...identity }, 'could not record the acknowledged change in svc.identity');
    }
  }

  /** Swaps in a new connection when it holds what this one held; otherwise keeps the old one. */
  function reopen(): void {
    const next = read('reopen', options.reopen);
    let same = false;
    try {
      same =
        next.getMeta(META_KEYS.nodeId) === identity.nodeId &&
        Number(next.getMeta(META_KEYS.acknowledgedDeploys)) === identity.acknowledgedDeploys &&
        Number(next.getMeta(META_KEYS.acknowledgedUndeploys)) === identity.acknowledgedUndeploys;
    } finally {
      if (!same) next.close();
    }
    if (!same) throw failed('reopen', new StoreError('corrupt', 'the server cannot use its store: the file was replaced while the server ran'));
    const previous = inner;
    inner = next;
    previous.close();
  }

  function checkWrite(): void {
    try {
      if (fault?.kind === 'readonly') reopen();
      write('write check', () => inner.setMeta(META_KEYS.writeCheckedAt, new Date().toISOString()));
    } catch (error) {
      if (!isStorageFault(error)) log.error({ err: error }, 'the write check failed');
    }
  }

  return {
    get path() {
      return inner.path;
    },
    nodeId: identity.nodeId,

    status() {
      if (fault !== undefined && fault.kind !== 'corrupt' && clock.now() - lastCheck >= WRITE_CHECK_INTERVAL_MS) {
        lastCheck = clock.now();
        checkWrite();
      }
      return fault === undefined ? { writable: true } : { writable: false, reason: `storage_${fault.kind}` };
    },

    putAgentWithModule(agent, moduleBytes) {
      const stored = write('putAgentWithModule', () => inner.putAgentWithModule(agent, moduleBytes));
      identity.acknowledgedDeploys += 1;
      recordIdentity();
      return stored;
    },

    deleteAgent(agentId) {
      const deleted = write('deleteAgent', () => inner.deleteAgent(agentId));
      identity.acknowledgedUndeploys += 1;
      recordIdentity();
      return deleted;
    },

    updateAgent: (agentId, patch) => write('updateAgent', () => inner.updateAgent(agentId, patch)),
    changeModule: (agentId, change) => write('changeModule', () => inner.changeModule(agentId, change)),
    setMeta: (key, value) => write('setMeta', () => inner.setMeta(key, value)),
    getAgent: (agentId) => read('getAgent', () => inner.getAgent(agentId)),
    listAgents: (listOptions) => read('listAgents', () => inner.listAgents(listOptions)),
    countAgents: () => read('countAgents', () => inner.countAgents()),
    getModule: (sha256) => read('getModule', () => inner.getModule(sha256)),
    hasModule: (sha256) => read('hasModule', () => inner.hasModule(sha256)),
    putReplica: (moduleBytes, now) => write('putReplica', () => inner.putReplica(moduleBytes, now)),
    replicas: () => read('replicas', () => inner.replicas()),
    dropReplica: (sha256) => write('dropReplica', () => inner.dropReplica(sha256)),
    getMeta: (key) => read('getMeta', () => inner.getMeta(key)),
    quickCheck: () => read('quickCheck', () => inner.quickCheck()),

    *allAgents() {
      try {
        yield* inner.allAgents();
      } catch (error) {
        throw failed('allAgents', error);
      }
    },

    close() {
      inner.close();
      identityFile.close();
    },
  };
}
