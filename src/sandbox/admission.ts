/**
 * The admission pipeline: size cap, allowlist decoder (which ends with
 * `WebAssembly.validate` of the original), instrumentation, compilation.
 * Results are cached by sha256 of the original bytes so the same module is
 * decoded and compiled once however many agents run it.
 */
import { createHash } from 'node:crypto';
import { SvcError } from '../errors/svc-error.js';
import { instrumentModule } from './instrument.js';
import type { AdmittedModule, SandboxLimits } from './types.js';
import { validateModule } from './validate.js';

/** Compiled modules kept by default; each holds its machine code, so the bound is on count. */
export const DEFAULT_ADMISSION_CACHE_SIZE = 64;

export interface AdmissionCacheStats {
  /** Modules currently cached (admitted or being admitted). */
  size: number;
  capacity: number;
  hits: number;
  misses: number;
}

export interface Admission {
  /**
   * Admits a module or rejects it with `SvcError` (`PAYLOAD_TOO_LARGE`,
   * `INVALID_MODULE`). Asynchronous because compilation is; concurrent calls
   * with the same bytes share one admission.
   */
  admit(bytes: Uint8Array): Promise<AdmittedModule>;
  stats(): AdmissionCacheStats;
}

export interface AdmissionOptions {
  /** Bound of the LRU cache of admitted modules, default `DEFAULT_ADMISSION_CACHE_SIZE`. */
  cacheSize?: number;
}

export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

async function admitUncached(bytes: Uint8Array, sha256: string, limits: SandboxLimits): Promise<AdmittedModule> {
  const info = validateModule(bytes, limits);
  const instrumented = instrumentModule(bytes, info, limits);
  let module: WebAssembly.Module;
  try {
    module = await WebAssembly.compile(instrumented.bytes as Uint8Array<ArrayBuffer>);
  } catch (error) {
    // The original validated, so this is an engine limit the added code crossed (or an instrumenter bug).
    const detail = error instanceof Error ? error.message : String(error);
    throw new SvcError('INVALID_MODULE', `the instrumented module does not compile: ${detail}`, { reason: 'invalid_module', stage: 'instrumented' });
  }
  return { sha256, size: bytes.length, info, module, globalExports: instrumented.globalExports };
}

export function createAdmission(limits: SandboxLimits, options: AdmissionOptions = {}): Admission {
  const capacity = Math.max(1, options.cacheSize ?? DEFAULT_ADMISSION_CACHE_SIZE);
  // Map iteration order is insertion order: re-inserting on a hit makes the first key the least recently used.
  const cache = new Map<string, Promise<AdmittedModule>>();
  let hits = 0;
  let misses = 0;

  return {
    admit(bytes: Uint8Array): Promise<AdmittedModule> {
      if (bytes.length > limits.maxModuleSize) {
        return Promise.reject(
          new SvcError('PAYLOAD_TOO_LARGE', `module of ${bytes.length} bytes exceeds the limit of ${limits.maxModuleSize}`, {
            reason: 'module_too_large',
            limit: String(limits.maxModuleSize),
            size: String(bytes.length),
          }),
        );
      }
      // Copy so a caller reusing its buffer cannot change what was validated.
      const own = bytes.slice();
      const sha256 = sha256Hex(own);
      const cached = cache.get(sha256);
      if (cached !== undefined) {
        hits += 1;
        cache.delete(sha256);
        cache.set(sha256, cached);
        return cached;
      }
      misses += 1;
      const admission = admitUncached(own, sha256, limits);
      cache.set(sha256, admission);
      // Rejections are not cached: the caller already has the error.
      admission.catch(() => {
        if (cache.get(sha256) === admission) cache.delete(sha256);
      });
      while (cache.size > capacity) {
        const oldest = cache.keys().next().value as string;
        cache.delete(oldest);
      }
      return admission;
    },
    stats(): AdmissionCacheStats {
      return { size: cache.size, capacity, hits, misses };
    },
  };
}
