/**
 * The allowlist decoder (DESIGN.md section 2): walks every section and every
 * instruction of a module and refuses anything outside the Agent ABI v1 before
 * the module is instrumented or compiled. `WebAssembly.validate` runs last, for
 * typing, which this decoder does not repeat.
 */
import { SvcError, type ErrorMetadata } from '../errors/svc-error.js';
import { RESERVED_EXPORT_PREFIX, UPGRADE_EXPORT, type ModuleInfo, type RejectionReason, type SandboxLimits, type ValueTypeName } from './types.js';
import { ForbiddenFeatureError, Op, featureOfOpcode, hex, readInstruction, readValueType, refuseType } from './wasm-opcodes.js';
import { WasmReadError, WasmReader } from './wasm-reader.js';

export const WASI_MODULE = 'wasi_snapshot_preview1';

const I32 = 0x7f;
const VALUE_TYPE_NAMES: Readonly<Record<number, ValueTypeName>> = { 0x7f: 'i32', 0x7e: 'i64', 0x7d: 'f32', 0x7c: 'f64' };
const I64 = 0x7e;

export interface FuncType {
  params: number[];
  results: number[];
}

/** The five WASI preview 1 calls of the ABI, with their standard signatures. */
export const WASI_IMPORTS: Readonly<Record<string, FuncType>> = {
  fd_read: { params: [I32, I32, I32, I32], results: [I32] },
  fd_write: { params: [I32, I32, I32, I32], results: [I32] },
  fd_close: { params: [I32], results: [I32] },
  clock_time_get: { params: [I32, I64, I32], results: [I32] },
  random_get: { params: [I32, I32], results: [I32] },
};

/** Locals per function that V8 accepts; a larger declaration is malformed for us. */
const MAX_LOCALS = 50_000;

const enum Kind {
  Func = 0,
  Table = 1,
  Memory = 2,
  Global = 3,
  Tag = 4,
}
const KIND_NAMES = ['function', 'table', 'memory', 'global', 'tag'];

const SECTION = { custom: 0, type: 1, import: 2, function: 3, table: 4, memory: 5, global: 6, export: 7, start: 8, element: 9, code: 10, data: 11, dataCount: 12, tag: 13 } as const;

interface Decoded {
  types: FuncType[];
  /** Type index of every function, imports first. */
  funcTypes: number[];
  importedFuncs: number;
  imports: string[];
  tables: number;
  memory: { initial: number; maximum: number | null } | null;
  globals: Array<{ type: number; mutable: boolean }>;
  dataSegments: ModuleInfo['dataSegments'];
  exports: Map<string, { kind: Kind; index: number }>;
  hasStart: boolean;
  codeCount: number;
}

function reject(reason: RejectionReason, message: string, metadata: ErrorMetadata = {}): never {
  throw new SvcError('INVALID_MODULE', message, { reason, ...metadata });
}

function sameType(a: FuncType, b: FuncType): boolean {
  return a.params.join() === b.params.join() && a.results.join() === b.results.join();
}

function isVoid(type: FuncType | undefined): boolean {
  return type !== undefined && type.params.length === 0 && type.results.length === 0;
}

function readValueTypes(r: WasmReader): number[] {
  const n = r.count();
  const types: number[] = [];
  for (let i = 0; i < n; i++) types.push(readValueType(r));
  return types;
}

/** Memory or table limits; only the MVP flags 0x00 (no maximum) and 0x01 pass. */
function readLimits(r: WasmReader): { initial: number; maximum: number | null } {
  const offset = r.pos;
  const flags = r.u8();
  if (flags > 0x0f) r.fail(`unknown limits flags ${hex(flags)}`, offset);
  if (flags & 0x08) throw new ForbiddenFeatureError('custom_page_sizes', offset, { flags: hex(flags) });
  if (flags & 0x04) throw new ForbiddenFeatureError('memory64', offset, { flags: hex(flags) });
  if (flags & 0x02) throw new ForbiddenFeatureError('threads', offset, { flags: hex(flags) });
  const initial = r.u32();
  return { initial, maximum: flags & 0x01 ? r.u32() : null };
}

/** MVP constant expression: one `t.const` then `end`. */
/** Checks a constant expression; answers its value when it is an `i32.const` (a data segment's offset). */
export function readConstExpr(r: WasmReader): number | undefined {
  const offset = r.pos;
  const op = r.u8();
  let value: number | undefined;
  if (op === Op.i32Const) value = r.s32();
  else if (op === Op.i64Const) r.s64();
  else if (op === Op.f32Const) r.skip(4);
  else if (op === Op.f64Const) r.skip(8);
  else if (op === Op.globalGet) throw new ForbiddenFeatureError('extended_const', offset, { opcode: hex(op) });
  else if (featureOfOpcode(op) !== 'unknown') throw new ForbiddenFeatureError(featureOfOpcode(op), offset, { opcode: hex(op) });
  else r.fail(`${hex(op)} is not a constant instruction`, offset);
  const endOffset = r.pos;
  const next = r.u8();
  if (next !== Op.end) throw new ForbiddenFeatureError('extended_const', endOffset, { opcode: hex(next) });
  return value;
}

function readTypes(r: WasmReader, d: Decoded): void {
  const n = r.count();
  for (let i = 0; i < n; i++) {
    const offset = r.pos;
    const form = r.u8();
    if (form !== 0x60) {
      const gc = form === 0x5e || form === 0x5f || (form >= 0x4e && form <= 0x50);
      throw new ForbiddenFeatureError(gc ? 'gc' : 'unknown', offset, { type: hex(form) });
    }
    d.types.push({ params: readValueTypes(r), results: readValueTypes(r) });
  }
}

function typeIndex(r: WasmReader, d: Decoded): number {
  const offset = r.pos;
  const index = r.u32();
  if (index >= d.types.length) r.fail(`type index ${index} out of range`, offset);
  return index;
}

function readImports(r: WasmReader, d: Decoded): void {
  const n = r.count(3);
  for (let i = 0; i < n; i++) {
    const module = r.name();
    const field = r.name();
    const offset = r.pos;
    const kind = r.u8();
    const name = `${module}.${field}`;
    const meta = { import: name, offset: String(offset) };
    if (kind === Kind.Table) reject('imported_table', `imported table ${name} is not allowed`, meta);
    if (kind === Kind.Memory) reject('imported_memory', `imported memory ${name} is not allowed`, meta);
    if (kind === Kind.Global) reject('imported_global', `imported global ${name} is not allowed`, meta);
    if (kind === Kind.Tag) throw new ForbiddenFeatureError('exceptions', offset, { import: name });
    if (kind !== Kind.Func) r.fail(`unknown import kind ${kind}`, offset);
    const type = typeIndex(r, d);
    const expected = module === WASI_MODULE && Object.hasOwn(WASI_IMPORTS, field) ? WASI_IMPORTS[field] : undefined;
    if (expected === undefined) reject('forbidden_import', `import ${name} is not allowed`, meta);
    if (!sameType(d.types[type] as FuncType, expected)) reject('import_signature', `import ${name} does not have its standard signature`, meta);
    d.funcTypes.push(type);
    d.importedFuncs += 1;
    if (!d.imports.includes(field)) d.imports.push(field);
  }
}

function readTables(r: WasmReader, d: Decoded): void {
  const n = r.count(2);
  for (let i = 0; i < n; i++) {
    const offset = r.pos;
    if (d.tables >= 1) throw new ForbiddenFeatureError('reference_types', offset, { tables: String(n) });
    const type = r.u8();
    if (type === 0x40) throw new ForbiddenFeatureError('function_references', offset, { type: hex(type) });
    if (type !== 0x70) refuseType(type, offset);
    readLimits(r);
    d.tables += 1;
  }
}

function readMemories(r: WasmReader, d: Decoded): void {
  const n = r.count(2);
  if (n > 1) throw new ForbiddenFeatureError('multi_memory', r.pos, { memories: String(n) });
  if (n === 1) d.memory = readLimits(r);
}

function readGlobals(r: WasmReader, d: Decoded): void {
  const n = r.count(3);
  for (let i = 0; i < n; i++) {
    const type = readValueType(r);
    const offset = r.pos;
    const mutability = r.u8();
    if (mutability > 1) r.fail(`unknown global mutability ${mutability}`, offset);
    readConstExpr(r);
    d.globals.push({ type, mutable: mutability === 1 });
  }
}

function readExports(r: WasmReader, d: Decoded): void {
  const n = r.count(3);
  for (let i = 0; i < n; i++) {
    const name = r.name();
    const offset = r.pos;
    const kind = r.u8();
    if (kind === Kind.Tag) throw new ForbiddenFeatureError('exceptions', offset, { export: name });
    if (kind > Kind.Tag) r.fail(`unknown export kind ${kind}`, offset);
    const index = r.u32();
    const space = [d.funcTypes.length, d.tables, d.memory ? 1 : 0, d.globals.length][kind] as number;
    if (index >= space) r.fail(`export ${name} refers to a missing ${KIND_NAMES[kind]}`, offset);
    if (d.exports.has(name)) r.fail(`duplicate export ${name}`, offset);
    d.exports.set(name, { kind, index });
  }
}

function funcIndex(r: WasmReader, d: Decoded): void {
  const offset = r.pos;
  if (r.u32() >= d.funcTypes.length) r.fail('function index out of range', offset);
}

function readElements(r: WasmReader, d: Decoded): void {
  const n = r.count(3);
  for (let i = 0; i < n; i++) {
    const offset = r.pos;
    const flags = r.u32();
    if (flags === 4) throw new ForbiddenFeatureError('reference_types', offset, { segment: 'expressions' });
    if (flags >= 1 && flags <= 7) throw new ForbiddenFeatureError('bulk_memory', offset, { segment: flags & 1 ? 'passive or declarative' : 'explicit table index' });
    if (flags !== 0) r.fail(`unknown element segment flags ${flags}`, offset);
    readConstExpr(r);
    const m = r.count();
    for (let j = 0; j < m; j++) funcIndex(r, d);
  }
}

function readData(r: WasmReader, d: Decoded): void {
  const n = r.count(3);
  for (let i = 0; i < n; i++) {
    const offset = r.pos;
    const flags = r.u32();
    if (flags === 1 || flags === 2) throw new ForbiddenFeatureError('bulk_memory', offset, { segment: flags === 1 ? 'passive' : 'explicit memory index' });
    if (flags !== 0) r.fail(`unknown data segment flags ${flags}`, offset);
    const at = readConstExpr(r);
    const length = r.u32();
    r.skip(length);
    // A non-i32 offset fails WebAssembly.validate below; an i32 is an unsigned address.
    if (at !== undefined) d.dataSegments.push({ offset: at >>> 0, length });
  }
}

/** Walks one function body to its final `end`; every instruction goes through the allowlist. */
function readBody(r: WasmReader): void {
  const groups = r.count(2);
  let locals = 0;
  for (let i = 0; i < groups; i++) {
    const offset = r.pos;
    locals += r.u32();
    if (locals > MAX_LOCALS) r.fail(`more than ${MAX_LOCALS} locals`, offset);
    readValueType(r);
  }
  let depth = 1;
  while (depth > 0) {
    const op = readInstruction(r);
    if (op === Op.block || op === Op.loop || op === Op.if) depth += 1;
    else if (op === Op.end) depth -= 1;
  }
  r.expectEnd('function body');
}

function readCode(r: WasmReader, d: Decoded): void {
  const offset = r.pos;
  const n = r.count(2);
  if (n !== d.funcTypes.length - d.importedFuncs) r.fail(`${n} function bodies for ${d.funcTypes.length - d.importedFuncs} functions`, offset);
  for (let i = 0; i < n; i++) readBody(r.window(r.u32()));
  d.codeCount = n;
}

function decode(bytes: Uint8Array): Decoded {
  const d: Decoded = { types: [], funcTypes: [], importedFuncs: 0, imports: [], tables: 0, memory: null, globals: [], exports: new Map(), hasStart: false, codeCount: 0, dataSegments: [] };
  const r = new WasmReader(bytes);
  const header = r.take(8);
  if (header[0] !== 0x00 || header[1] !== 0x61 || header[2] !== 0x73 || header[3] !== 0x6d) r.fail('bad magic number', 0);
  if (header[4] !== 0x01 || header[5] !== 0x00 || header[6] !== 0x00 || header[7] !== 0x00) r.fail('unsupported binary version', 4);
  let last = 0;
  while (!r.atEnd()) {
    const offset = r.pos;
    const id = r.u8();
    const s = r.window(r.u32());
    if (id === SECTION.custom) {
      s.name();
      continue;
    }
    if (id === SECTION.dataCount) throw new ForbiddenFeatureError('bulk_memory', offset, { section: String(id) });
    if (id === SECTION.tag) throw new ForbiddenFeatureError('exceptions', offset, { section: String(id) });
    if (id > SECTION.data) throw new ForbiddenFeatureError('unknown', offset, { section: String(id) });
    if (id <= last) r.fail(`section ${id} duplicated or out of order`, offset);
    last = id;
    if (id === SECTION.type) readTypes(s, d);
    else if (id === SECTION.import) readImports(s, d);
    else if (id === SECTION.function) {
      const n = s.count();
      for (let i = 0; i < n; i++) d.funcTypes.push(typeIndex(s, d));
    } else if (id === SECTION.table) readTables(s, d);
    else if (id === SECTION.memory) readMemories(s, d);
    else if (id === SECTION.global) readGlobals(s, d);
    else if (id === SECTION.export) readExports(s, d);
    else if (id === SECTION.start) {
      funcIndex(s, d);
      d.hasStart = true;
    } else if (id === SECTION.element) readElements(s, d);
    else if (id === SECTION.code) readCode(s, d);
    else readData(s, d);
    s.expectEnd(`section ${id}`);
  }
  if (d.codeCount !== d.funcTypes.length - d.importedFuncs) r.fail('function section without code section', r.pos);
  return d;
}

function checkMemory(d: Decoded, limits: SandboxLimits): ModuleInfo['memory'] {
  const memory = d.memory;
  if (memory === null) reject('missing_export', 'the module defines no memory', { export: 'memory' });
  const limit = String(limits.maxMemoryPages);
  if (memory.initial > limits.maxMemoryPages) reject('memory_limit', `initial memory ${memory.initial} pages exceeds the limit of ${limit}`, { limit, initial: String(memory.initial) });
  if (memory.maximum === null && !limits.lowerMemoryMaximum) reject('memory_no_maximum', 'the memory declares no maximum', { limit });
  if (memory.maximum !== null && memory.maximum > limits.maxMemoryPages && !limits.lowerMemoryMaximum) {
    reject('memory_limit', `memory maximum ${memory.maximum} pages exceeds the limit of ${limit}`, { limit, maximum: String(memory.maximum) });
  }
  const lowered = memory.maximum === null || memory.maximum > limits.maxMemoryPages;
  return { initialPages: memory.initial, maximumPages: lowered ? limits.maxMemoryPages : (memory.maximum as number), lowered };
}

function checkExports(d: Decoded): ModuleInfo['startExport'] {
  const typeOf = (index: number): FuncType | undefined => d.types[d.funcTypes[index] as number];
  const expectVoidFunction = (name: string): boolean => {
    const e = d.exports.get(name);
    if (e === undefined) return false;
    if (e.kind !== Kind.Func || !isVoid(typeOf(e.index))) {
      reject('export_kind', `export ${name} must be a function of type [] -> []`, { export: name, kind: KIND_NAMES[e.kind] as string });
    }
    return true;
  };
  for (const name of d.exports.keys()) {
    if (name.startsWith(RESERVED_EXPORT_PREFIX)) reject('reserved_export', `export ${name} uses the reserved prefix ${RESERVED_EXPORT_PREFIX}`, { export: name });
  }
  const memory = d.exports.get('memory');
  if (memory === undefined) reject('missing_export', 'the module does not export its memory as "memory"', { export: 'memory' });
  if (memory.kind !== Kind.Memory) reject('export_kind', 'export memory must be a memory', { export: 'memory', kind: KIND_NAMES[memory.kind] as string });
  if (!expectVoidFunction('handle')) reject('missing_export', 'the module does not export handle', { export: 'handle' });
  expectVoidFunction(UPGRADE_EXPORT);
  const hasInitialize = expectVoidFunction('_initialize');
  const hasStart = expectVoidFunction('_start');
  if (hasInitialize) return '_initialize';
  return hasStart ? '_start' : null;
}

function translate(error: unknown): never {
  if (error instanceof WasmReadError) reject('malformed', error.message, { offset: String(error.offset) });
  if (error instanceof ForbiddenFeatureError) {
    const what = error.detail.opcode ?? error.detail.type ?? (error.detail.section ? `section ${error.detail.section}` : '');
    reject('forbidden_feature', `feature ${error.feature} is not allowed${what ? ` (${what})` : ''}`, { feature: error.feature, ...error.detail, offset: String(error.offset) });
  }
  throw error;
}

/**
 * Decodes and checks a module against the Agent ABI v1. Throws
 * `SvcError('INVALID_MODULE')` with `metadata.reason` naming the rule broken.
 */
export function validateModule(bytes: Uint8Array, limits: SandboxLimits): ModuleInfo {
  let d: Decoded;
  try {
    d = decode(bytes);
  } catch (error) {
    translate(error);
  }
  const startExport = checkExports(d);
  const memory = checkMemory(d, limits);
  if (!WebAssembly.validate(bytes as Uint8Array<ArrayBuffer>)) reject('invalid_module', 'the module is not valid WebAssembly');
  return {
    imports: d.imports,
    exports: [...d.exports.keys()],
    memory,
    mutableGlobals: d.globals.flatMap((g, i) => (g.mutable ? [i] : [])),
    mutableGlobalTypes: d.globals.flatMap((g) => (g.mutable ? [VALUE_TYPE_NAMES[g.type] as ValueTypeName] : [])),
    hasUpgrade: d.exports.has(UPGRADE_EXPORT),
    dataSegments: d.dataSegments,
    startExport,
    hasStartSection: d.hasStart,
    functionCount: d.funcTypes.length - d.importedFuncs,
  };
}
