/**
 * The instruction allowlist: WebAssembly MVP plus sign-extension,
 * non-trapping float-to-int and multi-value block types (DESIGN.md section 2).
 * Anything not in the table is refused, naming the proposal it belongs to when
 * the opcode is known, "unknown" otherwise.
 */
import { WasmReader } from './wasm-reader.js';

export type Feature =
  | 'simd'
  | 'threads'
  | 'reference_types'
  | 'bulk_memory'
  | 'exceptions'
  | 'tail_call'
  | 'memory64'
  | 'multi_memory'
  | 'gc'
  | 'function_references'
  | 'extended_const'
  | 'custom_page_sizes'
  | 'unknown';

/** The module uses a feature outside the allowlist; `detail` names what was seen (`opcode`, `type`, `section`). */
export class ForbiddenFeatureError extends Error {
  override readonly name = 'ForbiddenFeatureError';

  constructor(
    readonly feature: Feature,
    readonly offset: number,
    readonly detail: Record<string, string> = {},
  ) {
    super(`forbidden feature ${feature} at offset ${offset}`);
  }
}

export function hex(byte: number): string {
  return `0x${byte.toString(16).padStart(2, '0')}`;
}

/** How the immediates after an opcode are encoded. */
const enum Imm {
  None,
  Block,
  Label,
  BrTable,
  Func,
  CallIndirect,
  Local,
  Global,
  MemArg,
  MemIndex,
  I32,
  I64,
  F32,
  F64,
}

export const Op = {
  unreachable: 0x00,
  block: 0x02,
  loop: 0x03,
  if: 0x04,
  else: 0x05,
  end: 0x0b,
  return: 0x0f,
  call: 0x10,
  callIndirect: 0x11,
  globalGet: 0x23,
  globalSet: 0x24,
  localGet: 0x20,
  localTee: 0x22,
  memoryGrow: 0x40,
  i32Const: 0x41,
  i64Const: 0x42,
  f32Const: 0x43,
  f64Const: 0x44,
  i32Ne: 0x47,
  i32GtU: 0x4b,
  i32Sub: 0x6b,
  i64LtS: 0x53,
  i64Sub: 0x7d,
  /** Prefix of the saturating truncations (sub-opcodes 0x00-0x07 allowed). */
  prefixFC: 0xfc,
} as const;

/** Immediates of every allowed single-byte opcode; `undefined` means not allowed. */
const IMMEDIATES: Array<Imm | undefined> = new Array<Imm | undefined>(256).fill(undefined);
function allow(from: number, to: number, imm: Imm): void {
  for (let op = from; op <= to; op++) IMMEDIATES[op] = imm;
}
allow(0x00, 0x01, Imm.None); // unreachable, nop
allow(0x02, 0x04, Imm.Block); // block, loop, if
allow(0x05, 0x05, Imm.None); // else
allow(0x0b, 0x0b, Imm.None); // end
allow(0x0c, 0x0d, Imm.Label); // br, br_if
allow(0x0e, 0x0e, Imm.BrTable);
allow(0x0f, 0x0f, Imm.None); // return
allow(0x10, 0x10, Imm.Func); // call
allow(0x11, 0x11, Imm.CallIndirect);
allow(0x1a, 0x1b, Imm.None); // drop, select
allow(0x20, 0x22, Imm.Local);
allow(0x23, 0x24, Imm.Global);
allow(0x28, 0x3e, Imm.MemArg); // loads and stores
allow(0x3f, 0x40, Imm.MemIndex); // memory.size, memory.grow
allow(0x41, 0x41, Imm.I32);
allow(0x42, 0x42, Imm.I64);
allow(0x43, 0x43, Imm.F32);
allow(0x44, 0x44, Imm.F64);
allow(0x45, 0xbf, Imm.None); // MVP numeric instructions
allow(0xc0, 0xc4, Imm.None); // sign-extension

/** Highest allowed sub-opcode after 0xFC (i32.trunc_sat_f32_s .. i64.trunc_sat_f64_u). */
const FC_ALLOWED_MAX = 0x07;

/** Known opcodes of proposals we refuse. */
const FORBIDDEN: ReadonlyMap<number, Feature> = new Map<number, Feature>([
  [0x06, 'exceptions'], // try
  [0x07, 'exceptions'], // catch
  [0x08, 'exceptions'], // throw
  [0x09, 'exceptions'], // rethrow
  [0x0a, 'exceptions'], // throw_ref
  [0x18, 'exceptions'], // delegate
  [0x19, 'exceptions'], // catch_all
  [0x1f, 'exceptions'], // try_table
  [0x12, 'tail_call'], // return_call
  [0x13, 'tail_call'], // return_call_indirect
  [0x14, 'function_references'], // call_ref
  [0x15, 'function_references'], // return_call_ref
  [0x1c, 'reference_types'], // typed select
  [0x25, 'reference_types'], // table.get
  [0x26, 'reference_types'], // table.set
  [0xd0, 'reference_types'], // ref.null
  [0xd1, 'reference_types'], // ref.is_null
  [0xd2, 'reference_types'], // ref.func
  [0xd3, 'gc'], // ref.eq
  [0xd4, 'function_references'], // ref.as_non_null
  [0xd5, 'function_references'], // br_on_null
  [0xd6, 'function_references'], // br_on_non_null
  [0xfb, 'gc'],
  [0xfd, 'simd'],
  [0xfe, 'threads'],
]);

function forbiddenFC(sub: number): Feature {
  if (sub >= 0x08 && sub <= 0x0e) return 'bulk_memory'; // memory.init .. table.copy
  if (sub >= 0x0f && sub <= 0x11) return 'reference_types'; // table.grow, table.size, table.fill
  return 'unknown';
}

/** Feature of a refused opcode byte (used for constant expressions too). */
export function featureOfOpcode(op: number): Feature {
  return FORBIDDEN.get(op) ?? 'unknown';
}

const VALUE_TYPES = new Set([0x7f, 0x7e, 0x7d, 0x7c]); // i32 i64 f32 f64
const FORBIDDEN_TYPES: ReadonlyMap<number, Feature> = new Map<number, Feature>([
  [0x7b, 'simd'], // v128
  [0x70, 'reference_types'], // funcref
  [0x6f, 'reference_types'], // externref
  [0x69, 'exceptions'], // exnref
  [0x74, 'exceptions'], // nullexnref
  [0x64, 'function_references'], // (ref ht)
  [0x63, 'function_references'], // (ref null ht)
  [0x6e, 'gc'], // anyref
  [0x6d, 'gc'], // eqref
  [0x6c, 'gc'], // i31ref
  [0x6b, 'gc'], // structref
  [0x6a, 'gc'], // arrayref
  [0x71, 'gc'], // nullref
  [0x72, 'gc'], // nullexternref
  [0x73, 'gc'], // nullfuncref
  [0x78, 'gc'], // i8 (packed)
  [0x77, 'gc'], // i16 (packed)
]);

export function refuseType(byte: number, offset: number): never {
  throw new ForbiddenFeatureError(FORBIDDEN_TYPES.get(byte) ?? 'unknown', offset, { type: hex(byte) });
}

/** Reads a value type; only i32, i64, f32 and f64 pass. */
export function readValueType(r: WasmReader): number {
  const offset = r.pos;
  const byte = r.u8();
  if (!VALUE_TYPES.has(byte)) refuseType(byte, offset);
  return byte;
}

/** Reads a block type: empty, one value type, or (multi-value) a type index. Returns the index or -1. */
export function readBlockType(r: WasmReader): number {
  const byte = r.peek();
  if (byte === 0x40) {
    r.pos += 1;
    return -1;
  }
  if ((byte & 0xc0) === 0x40) {
    readValueType(r);
    return -1;
  }
  const start = r.pos;
  const index = r.s33();
  if (index < 0) r.fail('negative block type index', start);
  return index;
}

/** An index byte that MVP fixes at zero (memory index, table index). */
function reservedZero(r: WasmReader, feature: Feature): void {
  const offset = r.pos;
  const byte = r.u8();
  if (byte !== 0) throw new ForbiddenFeatureError(feature, offset, { index: String(byte) });
}

function readImmediates(r: WasmReader, imm: Imm): void {
  switch (imm) {
    case Imm.None:
      return;
    case Imm.Block:
      readBlockType(r);
      return;
    case Imm.Label:
    case Imm.Func:
    case Imm.Local:
    case Imm.Global:
      r.u32();
      return;
    case Imm.BrTable: {
      const n = r.count();
      for (let i = 0; i <= n; i++) r.u32();
      return;
    }
    case Imm.CallIndirect:
      r.u32();
      reservedZero(r, 'reference_types');
      return;
    case Imm.MemArg: {
      const offset = r.pos;
      const align = r.u32();
      // Bit 6 of the alignment announces a memory index (multi-memory).
      if (align & 0x40) throw new ForbiddenFeatureError('multi_memory', offset, { align: String(align) });
      r.u32();
      return;
    }
    case Imm.MemIndex:
      reservedZero(r, 'multi_memory');
      return;
    case Imm.I32:
      r.s32();
      return;
    case Imm.I64:
      r.s64();
      return;
    case Imm.F32:
      r.skip(4);
      return;
    case Imm.F64:
      r.skip(8);
      return;
  }
}

/**
 * Reads one instruction with its immediates, refusing anything outside the
 * allowlist. Returns the opcode, or `0xFC00 | sub` for the 0xFC prefix.
 */
export function readInstruction(r: WasmReader): number {
  const offset = r.pos;
  const op = r.u8();
  if (op === Op.prefixFC) {
    const sub = r.u32();
    if (sub > FC_ALLOWED_MAX) throw new ForbiddenFeatureError(forbiddenFC(sub), offset, { opcode: `${hex(op)} ${hex(sub)}` });
    return 0xfc00 | sub;
  }
  const imm = IMMEDIATES[op];
  if (imm === undefined) throw new ForbiddenFeatureError(featureOfOpcode(op), offset, { opcode: hex(op) });
  readImmediates(r, imm);
  return op;
}
