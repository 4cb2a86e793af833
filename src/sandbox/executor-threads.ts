/**
 * The executor pool's threads: spawning, warm spares and retirement. A lost
 * worker is replaced by a spare that has already started (spawning takes
 * 30–35 ms compiled and 120–150 ms under tsx on this machine; `terminate()`
 * 2–4 ms), so the pool is whole again at once while a new spare warms up.
 */
import type { Worker } from 'node:worker_threads';
import { siblingModule, startModuleWorker } from '../module-worker.js';
import { createSlot } from './watchdog.js';
import type { WorkerInit, WorkerMessage } from './worker-protocol.js';

/** Same extension as this file: `.ts` under tsx (src), `.js` compiled (dist). */
const WORKER_URL = siblingModule(import.meta.url, 'executor-worker');

export interface Thread {
  worker: Worker;
  slot: SharedArrayBuffer;
  /** The pool's worker id this thread serves; null for a spare or a retired thread. */
  owner: number | null;
  ready: boolean;
  retired: boolean;
}

export interface ThreadSetOptions {
  /** What every worker gets, besides its own watchdog slot. */
  init: Omit<WorkerInit, 'slot'>;
  stackLimitBytes: number | undefined;
  spares: number;
  onMessage(thread: Thread, message: WorkerMessage): void;
  /** A thread that serves a worker id exited without being retired (crash, out of memory). */
  onExit(thread: Thread): void;
}

export interface ThreadSet {
  spawn(owner: number): Thread;
  /** A thread for `owner` after its previous one was lost: a warm spare when there is one. */
  replace(owner: number): Thread;
  retire(thread: Thread): void;
  spareCount(): number;
  lastRespawnMs(): number | null;
  /** Time the last spawned thread took to start (new Worker to its `ready`). */
  lastSpawnMs(): number | null;
  /** The last uncaught error of a worker, for diagnosis. */
  lastError(): string | null;
  close(): Promise<void>;
}

function startWorker(init: WorkerInit, stackLimitBytes: number | undefined): Worker {
  const options = {
    workerData: init,
    ...(stackLimitBytes === undefined ? {} : { resourceLimits: { stackSizeMb: stackLimitBytes / (1024 * 1024) } }),
  };
  return startModuleWorker(WORKER_URL, options);
}

export function createThreadSet(options: ThreadSetOptions): ThreadSet {
  const spares: Thread[] = [];
  const live = new Set<Thread>();
  let respawnMs: number | null = null;
  let spawnMs: number | null = null;
  let lastError: string | null = null;
  /** Replacements waiting for a thread still starting, with the time their worker was lost. */
  const replacing = new Map<Thread, number>();
  let closed = false;

  function spawnThread(owner: number | null): Thread {
    const slot = createSlot();
    const spawnedAt = performance.now();
    const worker = startWorker({ ...options.init, slot }, options.stackLimitBytes);
    const thread: Thread = { worker, slot, owner, ready: false, retired: false };
    live.add(thread);
    worker.on('message', (message: WorkerMessage) => {
      if (message.kind === 'ready') {
        thread.ready = true;
        spawnMs = performance.now() - spawnedAt;
        const since = replacing.get(thread);
        if (since !== undefined) respawnMs = performance.now() - since;
        replacing.delete(thread);
      }
      options.onMessage(thread, message);
    });
    // An uncaught error in the worker is followed by 'exit', where the loss is handled.
    worker.on('error', (error) => {
      lastError = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    });
    worker.on('exit', () => {
      live.delete(thread);
      replacing.delete(thread);
      if (thread.retired || closed) return;
      const spare = spares.indexOf(thread);
      if (spare !== -1) {
        spares.splice(spare, 1);
        // A spare that died before starting would die again: no respawn loop.
        if (thread.ready) fillSpares();
      } else if (thread.owner !== null) options.onExit(thread);
    });
    return thread;
  }

  function fillSpares(): void {
    while (!closed && spares.length < options.spares) spares.push(spawnThread(null));
  }

  fillSpares();

  return {
    spawn: (owner) => spawnThread(owner),
    replace(owner) {
      const since = performance.now();
      const readyIndex = spares.findIndex((t) => t.ready);
      const thread = readyIndex !== -1 ? spares.splice(readyIndex, 1)[0]! : (spares.shift() ?? spawnThread(null));
      thread.owner = owner;
      if (thread.ready) respawnMs = performance.now() - since;
      else replacing.set(thread, since);
      fillSpares();
      return thread;
    },
    retire(thread) {
      thread.retired = true;
      thread.owner = null;
      void thread.worker.terminate();
    },
    spareCount: () => spares.length,
    lastRespawnMs: () => respawnMs,
    lastSpawnMs: () => spawnMs,
    lastError: () => lastError,
    async close() {
      closed = true;
      spares.length = 0;
      await Promise.all([...live].map((t) => t.worker.terminate()));
    },
  };
}
