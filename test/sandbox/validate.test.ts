import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { SvcError } from '../../src/errors/svc-error.js';
import type { SandboxLimits } from '../../src/sandbox/types.js';
import { validateModule } from '../../src/sandbox/validate.js';
import { WasmReadError, WasmReader } from '../../src/sandbox/wasm-reader.js';
import { WasmWriter } from '../../src/sandbox/wasm-writer.js';
import { watFixture, type WatFeatures } from '../helpers/wat.js';
import { code, engineOnlyTypeError, EXPORTS, FUNCS, HEADER, MEMORY, module, section, str, TABLE, TYPES } from '../helpers/wasm-bytes.js';

const LIMITS: SandboxLimits = { maxModuleSize: 1 << 20, maxMemoryPages: 1024, lowerMemoryMaximum: false, fuelPerExecution: 1_000_000n };
const LOWERING: SandboxLimits = { ...LIMITS, lowerMemoryMaximum: true };

function rejects(bytes: Uint8Array, expected: Record<string, string>, limits = LIMITS): void {
  assert.throws(
    () => validateModule(bytes, limits),
    (error: unknown) => {
      assert.ok(error instanceof SvcError, `expected SvcError, got ${String(error)}`);
      assert.equal(error.code, 'INVALID_MODULE');
      for (const [key, value] of Object.entries(expected)) assert.equal(error.metadata[key], value, `metadata.${key} (${error.message})`);
      for (const value of Object.values(error.metadata)) assert.equal(typeof value, 'string');
      return true;
    },
  );
}

describe('validateModule accepts the ABI', () => {
  it('accepts the minimal module and reports what it found', async () => {
    const info = validateModule(await watFixture('valid/minimal.wat'), LIMITS);
    assert.deepEqual(info, {
      imports: [],
      exports: ['memory', 'handle'],
      memory: { initialPages: 1, maximumPages: 1, lowered: false },
      mutableGlobals: [],
      mutableGlobalTypes: [],
      dataSegments: [],
      hasUpgrade: false,
      startExport: null,
      hasStartSection: false,
      functionCount: 1,
    });
    assert.deepEqual(validateModule(module(), LIMITS).exports, ['memory', 'handle']);
  });

  it('accepts all five WASI imports, a table with an active segment, data and _initialize', async () => {
    const info = validateModule(await watFixture('valid/wasi.wat'), LIMITS);
    assert.deepEqual(info.imports, ['fd_read', 'fd_write', 'fd_close', 'clock_time_get', 'random_get']);
    assert.equal(info.startExport, '_initialize');
    assert.equal(info.functionCount, 3);
  });

  it('accepts sign extension, saturating truncation, multi-value, mutable exported globals, start section and _start', async () => {
    const info = validateModule(await watFixture('valid/features.wat'), LIMITS);
    assert.equal(info.startExport, '_start');
    assert.equal(info.hasStartSection, true);
    assert.deepEqual(info.mutableGlobals, [0]);
  });

  it('lists mutable globals by index, skipping immutable ones', async () => {
    assert.deepEqual(validateModule(await watFixture('valid/globals.wat'), LIMITS).mutableGlobals, [0, 2, 3, 4]);
  });

  it('lowers a missing maximum to the limit when configured', async () => {
    const info = validateModule(await watFixture('reject/memory-no-maximum.wat'), LOWERING);
    assert.deepEqual(info.memory, { initialPages: 1, maximumPages: 1024, lowered: true });
  });

  it('lowers a maximum over the limit when configured', async () => {
    const info = validateModule(await watFixture('reject/memory-over-limit.wat'), LOWERING);
    assert.deepEqual(info.memory, { initialPages: 1, maximumPages: 1024, lowered: true });
  });

  it('ignores custom sections anywhere', () => {
    const custom = section(0, [...str('name'), 1, 2, 3]);
    const bytes = module();
    validateModule(new Uint8Array([...bytes.subarray(0, 8), ...custom, ...bytes.subarray(8), ...custom]), LIMITS);
  });
});

interface FixtureCase {
  file: string;
  features?: WatFeatures;
  limits?: SandboxLimits;
  expect: Record<string, string>;
}

const FIXTURES: FixtureCase[] = [
  { file: 'forbidden-import-module.wat', expect: { reason: 'forbidden_import', import: 'env.abort' } },
  { file: 'forbidden-import-path-open.wat', expect: { reason: 'forbidden_import', import: 'wasi_snapshot_preview1.path_open' } },
  { file: 'forbidden-import-proc-exit.wat', expect: { reason: 'forbidden_import', import: 'wasi_snapshot_preview1.proc_exit' } },
  { file: 'import-signature.wat', expect: { reason: 'import_signature', import: 'wasi_snapshot_preview1.fd_write' } },
  { file: 'import-signature-i64.wat', expect: { reason: 'import_signature', import: 'wasi_snapshot_preview1.clock_time_get' } },
  { file: 'imported-memory.wat', expect: { reason: 'imported_memory', import: 'wasi_snapshot_preview1.memory' } },
  { file: 'imported-table.wat', expect: { reason: 'imported_table', import: 'env.table' } },
  { file: 'imported-global.wat', expect: { reason: 'imported_global', import: 'env.seed' } },
  { file: 'simd-instruction.wat', features: { simd: true }, expect: { reason: 'forbidden_feature', feature: 'simd', opcode: '0xfd' } },
  { file: 'simd-local.wat', features: { simd: true }, expect: { reason: 'forbidden_feature', feature: 'simd', type: '0x7b' } },
  { file: 'threads-atomic.wat', features: { threads: true }, expect: { reason: 'forbidden_feature', feature: 'threads', opcode: '0xfe' } },
  { file: 'bulk-memory-copy.wat', features: { bulk_memory: true }, expect: { reason: 'forbidden_feature', feature: 'bulk_memory', opcode: '0xfc 0x0a' } },
  { file: 'bulk-memory-fill.wat', features: { bulk_memory: true }, expect: { reason: 'forbidden_feature', feature: 'bulk_memory', opcode: '0xfc 0x0b' } },
  { file: 'data-count.wat', features: { bulk_memory: true }, expect: { reason: 'forbidden_feature', feature: 'bulk_memory', section: '12' } },
  { file: 'passive-data.wat', features: { bulk_memory: true }, expect: { reason: 'forbidden_feature', feature: 'bulk_memory', segment: 'passive' } },
  { file: 'passive-elem.wat', features: { bulk_memory: true }, expect: { reason: 'forbidden_feature', feature: 'bulk_memory' } },
  { file: 'declarative-elem.wat', features: { bulk_memory: true, reference_types: true }, expect: { reason: 'forbidden_feature', feature: 'bulk_memory' } },
  { file: 'ref-null.wat', features: { reference_types: true }, expect: { reason: 'forbidden_feature', feature: 'reference_types', opcode: '0xd0' } },
  { file: 'externref-param.wat', features: { reference_types: true }, expect: { reason: 'forbidden_feature', feature: 'reference_types', type: '0x6f' } },
  { file: 'funcref-global.wat', features: { reference_types: true }, expect: { reason: 'forbidden_feature', feature: 'reference_types', type: '0x70' } },
  { file: 'table-get.wat', features: { reference_types: true }, expect: { reason: 'forbidden_feature', feature: 'reference_types', opcode: '0x25' } },
  { file: 'typed-select.wat', features: { reference_types: true }, expect: { reason: 'forbidden_feature', feature: 'reference_types', opcode: '0x1c' } },
  { file: 'two-tables.wat', features: { reference_types: true }, expect: { reason: 'forbidden_feature', feature: 'reference_types', tables: '2' } },
  { file: 'table-size.wat', features: { reference_types: true }, expect: { reason: 'forbidden_feature', feature: 'reference_types', opcode: '0xfc 0x10' } },
  { file: 'exceptions-try.wat', features: { exceptions: true }, expect: { reason: 'forbidden_feature', feature: 'exceptions', opcode: '0x06' } },
  { file: 'exceptions-tag.wat', features: { exceptions: true }, expect: { reason: 'forbidden_feature', feature: 'exceptions', section: '13' } },
  { file: 'tail-call.wat', features: { tail_call: true }, expect: { reason: 'forbidden_feature', feature: 'tail_call', opcode: '0x12' } },
  { file: 'memory64.wat', features: { memory64: true }, expect: { reason: 'forbidden_feature', feature: 'memory64', flags: '0x05' } },
  { file: 'gc-struct.wat', features: { gc: true }, expect: { reason: 'forbidden_feature', feature: 'gc', type: '0x5f' } },
  { file: 'missing-memory.wat', expect: { reason: 'missing_export', export: 'memory' } },
  { file: 'memory-not-exported.wat', expect: { reason: 'missing_export', export: 'memory' } },
  { file: 'missing-handle.wat', expect: { reason: 'missing_export', export: 'handle' } },
  { file: 'handle-wrong-type.wat', expect: { reason: 'export_kind', export: 'handle', kind: 'function' } },
  { file: 'handle-global.wat', expect: { reason: 'export_kind', export: 'handle', kind: 'global' } },
  { file: 'memory-export-kind.wat', expect: { reason: 'export_kind', export: 'memory', kind: 'function' } },
  { file: 'initialize-wrong-type.wat', expect: { reason: 'export_kind', export: '_initialize' } },
  { file: 'memory-no-maximum.wat', expect: { reason: 'memory_no_maximum', limit: '1024' } },
  { file: 'memory-over-limit.wat', expect: { reason: 'memory_limit', limit: '1024', maximum: '2000' } },
  { file: 'memory-initial-over-limit.wat', limits: LOWERING, expect: { reason: 'memory_limit', limit: '1024', initial: '2000' } },
  { file: 'reserved-export.wat', expect: { reason: 'reserved_export', export: '__svc_fuel' } },
];

describe('validateModule refuses each fixture under test/fixtures/reject', () => {
  for (const c of FIXTURES) {
    it(`${c.file}: ${Object.values(c.expect).join(' ')}`, async () => {
      rejects(await watFixture(`reject/${c.file}`, c.features ?? {}), c.expect, c.limits);
    });
  }
});

describe('validateModule refuses hostile encodings', () => {
  const cases: Array<[string, () => Uint8Array, Record<string, string>]> = [
    ['empty input', () => new Uint8Array(0), { reason: 'malformed', offset: '0' }],
    ['bad magic', () => new Uint8Array([0x00, 0x61, 0x73, 0x6e, 1, 0, 0, 0]), { reason: 'malformed', offset: '0' }],
    ['component-model version', () => new Uint8Array([...HEADER.slice(0, 4), 0x0d, 0x00, 0x01, 0x00]), { reason: 'malformed', offset: '4' }],
    ['garbage', () => new TextEncoder().encode('#!/bin/sh\nrm -rf /\n'), { reason: 'malformed', offset: '0' }],
    ['truncated binary', () => module().subarray(0, module().length - 3), { reason: 'malformed' }],
    ['huge LEB section size', () => new Uint8Array([...HEADER, 1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01]), { reason: 'malformed', offset: '9' }],
    ['u32 LEB with bits past 32', () => new Uint8Array([...HEADER, 1, 0xff, 0xff, 0xff, 0xff, 0x7f]), { reason: 'malformed', offset: '9' }],
    ['section length past the end', () => new Uint8Array([...HEADER, 1, 0x7f, 1, 0x60, 0, 0]), { reason: 'malformed', offset: '10' }],
    ['vector count past the end', () => new Uint8Array([...HEADER, 1, 5, 0xff, 0xff, 0xff, 0xff, 0x0f]), { reason: 'malformed', offset: '10' }],
    ['duplicate section', () => new Uint8Array([...HEADER, ...TYPES, ...TYPES]), { reason: 'malformed', offset: '14' }],
    ['sections out of order', () => new Uint8Array([...HEADER, ...TYPES, ...MEMORY, ...FUNCS]), { reason: 'malformed' }],
    ['function and code counts differ', () => new Uint8Array([...HEADER, ...TYPES, ...section(3, [2, 0, 0]), ...MEMORY, ...EXPORTS, ...code([0, 0x0b])]), { reason: 'malformed' }],
    ['function section without code', () => new Uint8Array([...HEADER, ...TYPES, ...FUNCS, ...MEMORY, ...EXPORTS]), { reason: 'malformed' }],
    ['bytes after the final end', () => module([0x0b, 0x01]), { reason: 'malformed' }],
    ['body ending inside a block', () => new Uint8Array([...HEADER, ...TYPES, ...FUNCS, ...MEMORY, ...EXPORTS, ...code([0, 0x02, 0x40, 0x0b])]), { reason: 'malformed' }],
    ['absurd local count', () => new Uint8Array([...HEADER, ...TYPES, ...FUNCS, ...MEMORY, ...EXPORTS, ...code([1, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x7f, 0x0b])]), { reason: 'malformed' }],
    ['export name not UTF-8', () => new Uint8Array([...HEADER, ...TYPES, ...FUNCS, ...MEMORY, ...section(7, [1, 1, 0xff, 0, 0]), ...code([0, 0x0b])]), { reason: 'malformed' }],
    ['export of a missing function', () => new Uint8Array([...HEADER, ...TYPES, ...FUNCS, ...MEMORY, ...section(7, [1, ...str('handle'), 0, 5]), ...code([0, 0x0b])]), { reason: 'malformed' }],
    ['unknown section id', () => new Uint8Array([...module(), 14, 1, 0]), { reason: 'forbidden_feature', feature: 'unknown', section: '14' }],
    ['unknown opcode', () => module([0x27]), { reason: 'forbidden_feature', feature: 'unknown', opcode: '0x27' }],
    ['unknown 0xFC sub-opcode', () => module([0xfc, 0x20]), { reason: 'forbidden_feature', feature: 'unknown', opcode: '0xfc 0x20' }],
    ['unknown value type', () => new Uint8Array([...HEADER, ...section(1, [1, 0x60, 1, 0x50, 0])]), { reason: 'forbidden_feature', feature: 'unknown', type: '0x50' }],
    ['shared memory', () => module([], { memory: section(5, [1, 0x03, 1, 1]) }), { reason: 'forbidden_feature', feature: 'threads', flags: '0x03' }],
    ['custom page sizes', () => module([], { memory: section(5, [1, 0x09, 1, 1, 16]) }), { reason: 'forbidden_feature', feature: 'custom_page_sizes' }],
    ['two memories', () => module([], { memory: section(5, [2, 0x01, 1, 1, 0x01, 1, 1]) }), { reason: 'forbidden_feature', feature: 'multi_memory', memories: '2' }],
    ['memory.size of memory 1', () => module([0x3f, 0x01, 0x1a]), { reason: 'forbidden_feature', feature: 'multi_memory', index: '1' }],
    ['memory.grow of memory 1', () => module([0x41, 0x00, 0x40, 0x01, 0x1a]), { reason: 'forbidden_feature', feature: 'multi_memory', index: '1' }],
    ['load with a memory index flag', () => module([0x41, 0x00, 0x28, 0x42, 0x01, 0x00, 0x1a]), { reason: 'forbidden_feature', feature: 'multi_memory' }],
    ['call_indirect through table 1', () => module([0x41, 0x00, 0x11, 0x00, 0x01], { table: TABLE }), { reason: 'forbidden_feature', feature: 'reference_types', index: '1' }],
    ['extended constant expression', () => module([], { globals: section(6, [1, 0x7f, 0, 0x41, 1, 0x41, 2, 0x6a, 0x0b]) }), { reason: 'forbidden_feature', feature: 'extended_const' }],
    ['global.get in an initializer', () => module([], { globals: section(6, [2, 0x7f, 0, 0x41, 1, 0x0b, 0x7f, 0, 0x23, 0, 0x0b]) }), { reason: 'forbidden_feature', feature: 'extended_const', opcode: '0x23' }],
    ['ref.func in an initializer', () => module([], { globals: section(6, [1, 0x7f, 0, 0xd2, 0, 0x0b]) }), { reason: 'forbidden_feature', feature: 'reference_types' }],
    ['call_ref', () => module([0x14, 0x00]), { reason: 'forbidden_feature', feature: 'function_references', opcode: '0x14' }],
    ['return_call_indirect', () => module([0x13, 0x00, 0x00]), { reason: 'forbidden_feature', feature: 'tail_call', opcode: '0x13' }],
    ['GC prefix', () => module([0xfb, 0x00]), { reason: 'forbidden_feature', feature: 'gc', opcode: '0xfb' }],
    ['v128 block type', () => module([0x02, 0x7b, 0x0b]), { reason: 'forbidden_feature', feature: 'simd', type: '0x7b' }],
    ['table with an initializer', () => module([], { table: section(4, [1, 0x40, 0x00, 0x70, 0x00, 1, 0xd0, 0x70, 0x0b]) }), { reason: 'forbidden_feature', feature: 'function_references' }],
    ['64-bit table', () => module([], { table: section(4, [1, 0x70, 0x04, 1]) }), { reason: 'forbidden_feature', feature: 'memory64' }],
    ['element segment with a table index', () => module([], { table: TABLE, elements: section(9, [1, 2, 0, 0x41, 0, 0x0b, 0, 0]) }), { reason: 'forbidden_feature', feature: 'bulk_memory', segment: 'explicit table index' }],
    ['element segment of expressions', () => module([], { table: TABLE, elements: section(9, [1, 4, 0x41, 0, 0x0b, 0]) }), { reason: 'forbidden_feature', feature: 'reference_types' }],
    ['data segment with a memory index', () => module([], { data: section(11, [1, 2, 0, 0x41, 0, 0x0b, 0]) }), { reason: 'forbidden_feature', feature: 'bulk_memory', segment: 'explicit memory index' }],
    ['exported tag', () => new Uint8Array([...HEADER, ...TYPES, ...FUNCS, ...MEMORY, ...section(7, [1, ...str('t'), 4, 0]), ...code([0, 0x0b])]), { reason: 'forbidden_feature', feature: 'exceptions' }],
    ['imported tag', () => new Uint8Array([...HEADER, ...TYPES, ...section(2, [1, ...str('env'), ...str('t'), 4, 0, 0])]), { reason: 'forbidden_feature', feature: 'exceptions', import: 'env.t' }],
    ['type error only the engine sees', engineOnlyTypeError, { reason: 'invalid_module' }],
  ];
  for (const [name, build, expected] of cases) {
    it(`${name}: ${Object.values(expected).join(' ')}`, () => rejects(build(), expected));
  }
});

describe('WasmReader and WasmWriter LEB128', () => {
  it('round-trips u32, s32 and s64', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffffffff }), fc.integer({ min: -0x80000000, max: 0x7fffffff }), fc.bigInt({ min: -(1n << 63n), max: (1n << 63n) - 1n }), (u, s, l) => {
        const r = new WasmReader(new WasmWriter(32).u32(u).s32(s).s64(l).toBytes());
        assert.equal(r.u32(), u);
        assert.equal(r.s32(), s);
        assert.equal(r.s64(), l);
        assert.ok(r.atEnd());
      }),
    );
  });

  it('refuses over-long and out-of-range encodings with the offset where they start', () => {
    const cases: Array<[number[], (r: WasmReader) => unknown]> = [
      [[0x80, 0x80, 0x80, 0x80, 0x80, 0x00], (r) => r.u32()],
      [[0xff, 0xff, 0xff, 0xff, 0x10], (r) => r.u32()],
      [[0xff, 0xff, 0xff, 0xff, 0x4f], (r) => r.s32()],
      [[0x80, 0x80, 0x80, 0x80, 0x70], (r) => r.s32()],
      [[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01], (r) => r.s64()],
    ];
    for (const [bytes, read] of cases) {
      const r = new WasmReader(new Uint8Array([0xaa, ...bytes]), 1);
      assert.throws(() => read(r), (error: unknown) => error instanceof WasmReadError && error.offset === 1, bytes.join());
    }
  });

  it('reports running out of input where the input ends', () => {
    assert.throws(() => new WasmReader(new Uint8Array([0x80])).u32(), (error: unknown) => error instanceof WasmReadError && error.offset === 1);
    assert.throws(() => new WasmReader(new Uint8Array([0x05, 0x61])).name(), (error: unknown) => error instanceof WasmReadError && error.offset === 1);
    assert.throws(() => new WasmReader(new Uint8Array([0x01, 0xff])).name(), (error: unknown) => error instanceof WasmReadError && error.offset === 0);
  });

  it('accepts the largest values and sign-extended forms', () => {
    assert.equal(new WasmReader(new Uint8Array([0xff, 0xff, 0xff, 0xff, 0x0f])).u32(), 0xffffffff);
    assert.equal(new WasmReader(new Uint8Array([0xff, 0xff, 0xff, 0xff, 0x7f])).s32(), -1);
    assert.equal(new WasmReader(new Uint8Array([0x80, 0x80, 0x80, 0x80, 0x78])).s32(), -0x80000000);
    assert.equal(new WasmReader(new Uint8Array([0xff, 0xff, 0xff, 0xff, 0x0f])).s33(), 0xffffffff);
  });
});
