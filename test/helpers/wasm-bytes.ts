/**
 * A tiny assembler for modules WAT cannot express: malformed input, proposals
 * wabt cannot validate here, and type errors that only the engine's own
 * validation catches (test/helpers/wat.ts validates with wabt, so it never
 * produces those).
 */
import { WasmWriter } from '../../src/sandbox/wasm-writer.js';

export const HEADER = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];
export function u32(n: number): number[] {
  return [...new WasmWriter(8).u32(n).toBytes()];
}
export function str(s: string): number[] {
  return [...new WasmWriter(8).name(s).toBytes()];
}
export function section(id: number, body: number[]): number[] {
  return [id, ...u32(body.length), ...body];
}
export function code(...bodies: number[][]): number[] {
  return section(10, [...u32(bodies.length), ...bodies.flatMap((b) => [...u32(b.length), ...b])]);
}
export const TYPES = section(1, [1, 0x60, 0, 0]);
export const FUNCS = section(3, [1, 0]);
export const MEMORY = section(5, [1, 0x01, 1, 1]);
export const EXPORTS = section(7, [2, ...str('memory'), 2, 0, ...str('handle'), 0, 0]);
export const TABLE = section(4, [1, 0x70, 0x00, 1]);

/** The minimal accepted module, with `handle`'s instructions (before the final end) and optional extra sections. */
export function module(instructions: number[] = [], extra: { memory?: number[]; globals?: number[]; table?: number[]; elements?: number[]; data?: number[] } = {}): Uint8Array {
  return new Uint8Array([
    ...HEADER,
    ...TYPES,
    ...FUNCS,
    ...(extra.table ?? []),
    ...(extra.memory ?? MEMORY),
    ...(extra.globals ?? []),
    ...EXPORTS,
    ...(extra.elements ?? []),
    ...code([0, ...instructions, 0x0b]),
    ...(extra.data ?? []),
  ]);
}

/**
 * Passes the project's allowlist decoder (every instruction allowed, the ABI's
 * imports and exports) but not `WebAssembly.validate`: `handle` drops from an
 * empty stack. Admission refuses it with reason `invalid_module`.
 */
export function engineOnlyTypeError(): Uint8Array {
  return module([0x1a]);
}
