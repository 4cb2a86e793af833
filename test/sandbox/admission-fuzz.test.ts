/**
 * Random mutations of valid modules through the decoder and the admission
 * pipeline. Only SvcError may escape, and every mutant that is accepted is
 * re-checked by means that share no code with the decoder: the engine's own
 * import and export lists, wabt's binary reader with every refused proposal
 * switched off (which lets a few SIMD loads through, hence also) a scan of
 * wabt's disassembly for the names of refused instructions and types. Runs a fixed seed by default; FUZZ_SEED=<n> and
 * FUZZ_RUNS=<n> explore further.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import wabtInit from 'wabt';
import { SvcError } from '../../src/errors/svc-error.js';
import { createAdmission } from '../../src/sandbox/admission.js';
import { instrumentModule } from '../../src/sandbox/instrument.js';
import type { RejectionReason, SandboxLimits } from '../../src/sandbox/types.js';
import { WASI_IMPORTS, WASI_MODULE, validateModule } from '../../src/sandbox/validate.js';
import { watFixture } from '../helpers/wat.js';

const SEED = Number(process.env.FUZZ_SEED ?? 0x5eed);
const RUNS = Number(process.env.FUZZ_RUNS ?? 10_000);
const LIMITS: SandboxLimits = { maxModuleSize: 1 << 16, maxMemoryPages: 1024, lowerMemoryMaximum: false, fuelPerExecution: 1_000_000n };
const LOWERING: SandboxLimits = { ...LIMITS, lowerMemoryMaximum: true, maxMemoryPages: 4 };
const SEEDS = ['minimal', 'compute', 'wasi', 'grow', 'globals', 'features', 'metered', 'spin'];
const REASONS = new Set<RejectionReason>([
  'module_too_large', 'malformed', 'forbidden_import', 'import_signature', 'imported_memory', 'imported_table', 'imported_global',
  'forbidden_feature', 'missing_export', 'export_kind', 'reserved_export', 'memory_no_maximum', 'memory_limit', 'invalid_module',
]);
/** Byte sequences of refused proposals, spliced in to make near misses likely. */
const HOSTILE = [[0xfd, 0x0c], [0xfe, 0x03, 0x00], [0xfc, 0x0a, 0x00, 0x00], [0xfc, 0x08], [0xd0, 0x70], [0x25, 0x00], [0x12, 0x00], [0x06, 0x40], [0x7b], [0x6f], [0x03], [0x0c, 0x00, 0x00], [0x80]];

const ALLOWED_FEATURES = { mutable_globals: true, sat_float_to_int: true, sign_extension: true, multi_value: true };
const REFUSED = ['simd', 'threads', 'bulk_memory', 'reference_types', 'exceptions', 'tail_call', 'memory64', 'gc', 'extended_const', 'function_references', 'relaxed_simd'];
const REFUSED_OFF = Object.fromEntries(REFUSED.map((f) => [f, false]));
const REFUSED_ON = Object.fromEntries(REFUSED.map((f) => [f, true]));
/** What a refused proposal looks like in wabt's text format. */
const FORBIDDEN_TEXT = [
  /\bv128\b|\b[if](8x16|16x8|32x4|64x2)\b|\b[if](8x16|16x8|32x4|64x2)\./, // simd
  /atomic|\bshared\b/, // threads
  /memory\.(copy|fill|init)|data\.drop|elem\.drop|table\.|\(elem \(;\d+;\) (func|declare|\(table)|\(data \(;\d+;\) ("|\(memory)/, // bulk memory
  /\bref\.|\b(externref|exnref|anyref|eqref|i31ref|structref|arrayref|nullref|nullfuncref|nullexternref)\b|select \(result/, // reference types, gc
  /^(?!\s*\(table ).*\bfuncref\b/, // funcref anywhere but the table
  /\btry\b|\bcatch|\bthrow|\brethrow|\bdelegate|\(tag /, // exceptions
  /return_call|call_ref|\(ref /, // tail calls, typed function references
  /\(memory [^)]*\bi64\b/, // memory64
  /\((struct|array|sub|rec)\b/, // gc
];
/** A global whose initializer is one constant. */
const GLOBAL_LINE = /^\s*\(global \(;\d+;\) (\(mut )?(i32|i64|f32|f64)\)? \((i32|i64|f32|f64)\.const [^()]*( \(;[^;]*;\))?\)\)$/;

type Wabt = Awaited<ReturnType<typeof wabtInit>>;
let wabt: Wabt;

/** Offsets of the top-level sections of a valid seed. */
function sections(bytes: Uint8Array): Array<[number, number]> {
  const found: Array<[number, number]> = [];
  let pos = 8;
  while (pos < bytes.length) {
    const start = pos;
    pos += 1;
    let size = 0;
    for (let shift = 0; ; shift += 7) {
      const b = bytes[pos++] as number;
      size += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) break;
    }
    pos += size;
    found.push([start, pos]);
  }
  return found;
}

const mutation = fc.oneof(
  fc.record({ kind: fc.constant('set' as const), at: fc.nat(), value: fc.integer({ min: 0, max: 255 }) }),
  fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), value: fc.integer({ min: 0, max: 7 }) }),
  fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), bytes: fc.uint8Array({ minLength: 1, maxLength: 8 }) }),
  fc.record({ kind: fc.constant('splice' as const), at: fc.nat(), value: fc.nat(HOSTILE.length - 1) }),
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), value: fc.integer({ min: 1, max: 16 }) }),
  fc.record({ kind: fc.constant('duplicate' as const), at: fc.nat(), value: fc.nat() }),
);
type Mutation = typeof mutation extends fc.Arbitrary<infer T> ? T : never;

function mutate(seed: Uint8Array, mutations: Mutation[]): Uint8Array {
  let bytes = seed;
  for (const m of mutations) {
    const at = bytes.length === 0 ? 0 : m.at % bytes.length;
    const copy = (): Uint8Array => bytes.slice();
    switch (m.kind) {
      case 'set':
        bytes = copy();
        bytes[at] = m.value;
        break;
      case 'flip':
        bytes = copy();
        bytes[at] = (bytes[at] as number) ^ (1 << m.value);
        break;
      case 'truncate':
        bytes = bytes.slice(0, at);
        break;
      case 'insert':
        bytes = new Uint8Array([...bytes.subarray(0, at), ...m.bytes, ...bytes.subarray(at)]);
        break;
      case 'splice':
        bytes = new Uint8Array([...bytes.subarray(0, at), ...(HOSTILE[m.value] as number[]), ...bytes.subarray(at)]);
        break;
      case 'delete':
        bytes = new Uint8Array([...bytes.subarray(0, at), ...bytes.subarray(at + m.value)]);
        break;
      case 'duplicate': {
        const list = sections(seed);
        const [from, to] = list[m.value % list.length] as [number, number];
        const [insertAt] = list[at % list.length] as [number, number];
        bytes = new Uint8Array([...seed.subarray(0, insertAt), ...seed.subarray(from, to), ...seed.subarray(insertAt)]);
        break;
      }
    }
  }
  return bytes;
}

function assertRejection(error: unknown, bytes: Uint8Array): void {
  if (!(error instanceof SvcError)) {
    assert.fail(`non-SvcError ${String(error)} for ${Buffer.from(bytes).toString('hex')}`);
  }
  assert.ok(error.code === 'INVALID_MODULE' || error.code === 'PAYLOAD_TOO_LARGE', error.code);
  assert.ok(REASONS.has(error.metadata.reason as RejectionReason), `reason ${error.metadata.reason}`);
  for (const value of Object.values(error.metadata)) assert.equal(typeof value, 'string');
}

/** Checks an accepted mutant without the decoder's code. */
function assertWithinAbi(bytes: Uint8Array, limits: SandboxLimits): void {
  const hex = Buffer.from(bytes).toString('hex');
  assert.ok(WebAssembly.validate(bytes as Uint8Array<ArrayBuffer>), `engine refuses ${hex}`);
  const module = new WebAssembly.Module(bytes as Uint8Array<ArrayBuffer>);
  for (const i of WebAssembly.Module.imports(module)) {
    assert.equal(i.kind, 'function', hex);
    assert.equal(i.module, WASI_MODULE, hex);
    assert.ok(Object.hasOwn(WASI_IMPORTS, i.name), `${i.name} in ${hex}`);
  }
  const exports = new Map(WebAssembly.Module.exports(module).map((e) => [e.name, e.kind]));
  assert.equal(exports.get('memory'), 'memory', hex);
  assert.equal(exports.get('handle'), 'function', hex);
  for (const name of exports.keys()) assert.ok(!name.startsWith('__svc_'), hex);
  // wabt's reader with the refused proposals off, then its disassembly (read with everything on) scanned by name.
  wabt.readWasm(bytes, { check: true, ...ALLOWED_FEATURES, ...REFUSED_OFF }).destroy();
  const read = wabt.readWasm(bytes, { check: true, ...ALLOWED_FEATURES, ...REFUSED_ON });
  try {
    const text = read.toText({});
    for (const line of text.split('\n')) {
      for (const pattern of FORBIDDEN_TEXT) assert.ok(!pattern.test(line), `${pattern} matches ${line.trim()} in ${hex}`);
      if (/^\s*\(global /.test(line)) assert.match(line, GLOBAL_LINE, hex);
    }
    assert.ok((text.match(/^\s*\(memory /gm) ?? []).length <= 1, hex);
    assert.ok((text.match(/^\s*\(table /gm) ?? []).length <= 1, hex);
  } finally {
    read.destroy();
  }
  const info = validateModule(bytes, limits);
  const instrumented = instrumentModule(bytes, info, limits);
  assert.ok(WebAssembly.validate(instrumented.bytes as Uint8Array<ArrayBuffer>), `instrumented form of ${hex} is invalid`);
}

describe('admission fuzz', async () => {
  wabt = await wabtInit();
  const seeds = await Promise.all(SEEDS.map((name) => watFixture(`valid/${name}.wat`)));
  const seedIndex = fc.nat(seeds.length - 1);

  it(`decoder: ${RUNS} mutants, only SvcError escapes, accepted mutants stay within the ABI, malformed ones the engine refuses too`, () => {
    let accepted = 0;
    fc.assert(
      fc.property(seedIndex, fc.array(mutation, { minLength: 1, maxLength: 3 }), fc.boolean(), (s, mutations, lower) => {
        const bytes = mutate(seeds[s] as Uint8Array, mutations);
        const limits = lower ? LOWERING : LIMITS;
        try {
          validateModule(bytes, limits);
        } catch (error) {
          assertRejection(error, bytes);
          // The decoder may refuse more than the engine (features), never a module the engine reads as well-formed MVP.
          if ((error as SvcError).metadata.reason === 'malformed') assert.ok(!WebAssembly.validate(bytes as Uint8Array<ArrayBuffer>), `engine accepts malformed ${Buffer.from(bytes).toString('hex')}`);
          return;
        }
        accepted += 1;
        assertWithinAbi(bytes, limits);
      }),
      { seed: SEED, numRuns: RUNS, includeErrorInReport: true },
    );
    assert.ok(accepted > RUNS / 200, `only ${accepted} mutants accepted; the property would be vacuous`);
  });

  it('admission: only SvcError escapes, and what is admitted instantiates', async () => {
    const admission = createAdmission(LIMITS, { cacheSize: 8 });
    await fc.assert(
      fc.asyncProperty(seedIndex, fc.array(mutation, { minLength: 1, maxLength: 2 }), async (s, mutations) => {
        const bytes = mutate(seeds[s] as Uint8Array, mutations);
        let admitted;
        try {
          admitted = await admission.admit(bytes);
        } catch (error) {
          assertRejection(error, bytes);
          return;
        }
        const imports = { [WASI_MODULE]: Object.fromEntries(Object.keys(WASI_IMPORTS).map((name) => [name, () => 0])) };
        await WebAssembly.instantiate(admitted.module, imports).catch((error: unknown) => {
          // A start function may trap (unreachable, fuel); anything else is a bug.
          assert.ok(error instanceof WebAssembly.RuntimeError, String(error));
        });
      }),
      { seed: SEED + 1, numRuns: Math.ceil(RUNS / 4), includeErrorInReport: true },
    );
  });
});
