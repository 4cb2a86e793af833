/**
 * Instance state kept across hibernation: a copy of linear memory and the
 * values of the mutable globals the instrumenter exported
 * (`AdmittedModule.globalExports`). Fuel and memory-budget globals are not
 * state: the host sets them before every execution. Runs inside a worker.
 */
import { WASM_PAGE_BYTES } from './worker-protocol.js';
import type { InstanceSnapshot } from './types.js';

function exportedGlobal(exports: WebAssembly.Exports, name: string): WebAssembly.Global {
  const global = exports[name];
  if (!(global instanceof WebAssembly.Global)) throw new Error(`export ${name} is not a global`);
  return global;
}

function exportedMemory(exports: WebAssembly.Exports): WebAssembly.Memory {
  const memory = exports['memory'];
  if (!(memory instanceof WebAssembly.Memory)) throw new Error('export memory is not a memory');
  return memory;
}

export function takeSnapshot(exports: WebAssembly.Exports, globalExports: readonly string[]): InstanceSnapshot {
  const memory = new Uint8Array(exportedMemory(exports).buffer.slice(0));
  const globals = globalExports.map((name) => exportedGlobal(exports, name).value as number | bigint);
  return { memory, globals };
}

/**
 * Restores `snapshot` into a fresh instance: grows memory to its size, copies
 * bytes, sets globals. The snapshot is of the same module, or, given the new
 * module's data segments (`upgrade`), of a previous version whose layout was
 * checked (upgrade-compat.ts): it may have had less initial memory, and the
 * new module's constants (its data segments, as instantiation just wrote
 * them) are written again over the old memory, since they belong to the code.
 */
export function restoreSnapshot(
  exports: WebAssembly.Exports,
  globalExports: readonly string[],
  snapshot: InstanceSnapshot,
  upgrade?: ReadonlyArray<{ offset: number; length: number }>,
): void {
  if (snapshot.globals.length !== globalExports.length) {
    throw new Error(`snapshot has ${snapshot.globals.length} globals, the module ${globalExports.length}`);
  }
  if (snapshot.memory.byteLength % WASM_PAGE_BYTES !== 0) throw new Error('snapshot memory is not a whole number of pages');
  const memory = exportedMemory(exports);
  const missing = (snapshot.memory.byteLength - memory.buffer.byteLength) / WASM_PAGE_BYTES;
  // Memory never shrinks, so a fresh instance larger than the snapshot means another module's snapshot.
  if (missing < 0 && upgrade === undefined) throw new Error('snapshot memory is smaller than the module\'s initial memory');
  if (missing > 0) memory.grow(missing);
  const constants = (upgrade ?? []).map(({ offset, length }) => ({ offset, bytes: new Uint8Array(memory.buffer, offset, length).slice() }));
  new Uint8Array(memory.buffer).set(snapshot.memory);
  for (const { offset, bytes } of constants) new Uint8Array(memory.buffer).set(bytes, offset);
  globalExports.forEach((name, i) => {
    exportedGlobal(exports, name).value = snapshot.globals[i];
  });
}
