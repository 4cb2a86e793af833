/**
 * Whether an agent's state can move to another module (an update keeping
 * state, docs/operator-guide.md): the state is linear memory plus the
 * module's own mutable globals (snapshot.ts), so the new module must declare
 * the same mutable global types in the same order, and its memory maximum
 * (and the agent's memory limit) must hold the memory being carried. Pure:
 * the agent host calls it with the modules' `ModuleInfo` and the snapshot's
 * size.
 */
import type { ModuleInfo } from './types.js';
import { WASM_PAGE_BYTES } from './worker-protocol.js';

export type Incompatibility =
  | { reason: 'incompatible_globals'; message: string; index: number; previous: string; next: string }
  | { reason: 'incompatible_memory'; message: string; pages: number; maximum: number };

const describeGlobals = (types: readonly string[]): string => (types.length === 0 ? 'none' : types.join(', '));

/** The first difference in mutable globals, or null when both modules declare the same types in order. */
export function globalsIncompatibility(previous: ModuleInfo, next: ModuleInfo): Incompatibility | null {
  const before = previous.mutableGlobalTypes;
  const after = next.mutableGlobalTypes;
  const length = Math.max(before.length, after.length);
  for (let index = 0; index < length; index++) {
    if (before[index] === after[index]) continue;
    return {
      reason: 'incompatible_globals',
      message: `mutable global ${index} is ${before[index] ?? 'absent'} in the running module and ${after[index] ?? 'absent'} in the new one (running: ${describeGlobals(before)}; new: ${describeGlobals(after)})`,
      index,
      previous: before[index] ?? 'absent',
      next: after[index] ?? 'absent',
    };
  }
  return null;
}

/** Null when `memoryBytes` of state fit the new module's maximum and the agent's limit. */
export function memoryIncompatibility(next: ModuleInfo, memoryBytes: number, memoryLimitBytes: number): Incompatibility | null {
  const pages = Math.ceil(memoryBytes / WASM_PAGE_BYTES);
  const maximum = Math.min(next.memory.maximumPages, Math.floor(memoryLimitBytes / WASM_PAGE_BYTES));
  if (pages <= maximum) return null;
  return {
    reason: 'incompatible_memory',
    message: `the agent's memory is ${pages} pages and the new module holds at most ${maximum} (its maximum ${next.memory.maximumPages}, the agent's memory_limit ${Math.floor(memoryLimitBytes / WASM_PAGE_BYTES)})`,
    pages,
    maximum,
  };
}
