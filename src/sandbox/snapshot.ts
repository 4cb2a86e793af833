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

/** Restores `snapshot` into a fresh instance of the same module: grows memory to its size, copies bytes, sets globals. */
export function restoreSnapshot(exports: WebAssembly.Exports, globalExports: readonly string[], snapshot: InstanceSnapshot): void {
  if (snapshot.globals.length !== globalExports.length) {
    throw new Error(`snapshot has ${snapshot.globals.length} globals, the module ${globalExports.length}`);
  }
  if (snapshot.memory.byteLength % WASM_PAGE_BYTES !== 0) throw new Error('snapshot memory is not a whole number of pages');
  const memory = exportedMemory(exports);
  const missing = (snapshot.memory.byteLength - memory.buffer.byteLength) / WASM_PAGE_BYTES;
  // Memory never shrinks, so a fresh instance larger than the snapshot means another module's snapshot.
  if (missing < 0) throw new Error('snapshot memory is smaller than the module\'s initial memory');
  if (missing > 0) memory.grow(missing);
  new Uint8Array(memory.buffer).set(snapshot.memory);
  globalExports.forEach((name, i) => {
    exportedGlobal(exports, name).value = snapshot.globals[i];
  });
}
