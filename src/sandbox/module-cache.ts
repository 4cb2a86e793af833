/**
 * Which compiled modules one worker holds. A `WebAssembly.Module` crosses to
 * a worker by structured clone (the compiled code is shared, not
 * recompiled), so it is sent with the first instance of its sha256 there and
 * evicted from the worker's cache with the last one.
 */

export interface ModuleCache {
  /** Counts one more instance of `sha256`; true when it is the first, and the module must go along. */
  acquire(sha256: string): boolean;
  /** Counts one instance fewer; the sha256 to evict from the worker when that was the last one, else null. */
  release(sha256: string): string | null;
  /** The worker was replaced: its cache is empty. */
  clear(): void;
  /** Modules held. */
  readonly size: number;
}

export function createModuleCache(): ModuleCache {
  const users = new Map<string, number>();
  return {
    acquire(sha256) {
      const count = users.get(sha256) ?? 0;
      users.set(sha256, count + 1);
      return count === 0;
    },
    release(sha256) {
      const count = (users.get(sha256) ?? 1) - 1;
      if (count > 0) {
        users.set(sha256, count);
        return null;
      }
      users.delete(sha256);
      return sha256;
    },
    clear() {
      users.clear();
    },
    get size() {
      return users.size;
    },
  };
}
