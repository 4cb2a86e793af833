import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { SvcError } from '../../src/errors/svc-error.js';
import { createAdmission } from '../../src/sandbox/admission.js';
import { FUEL_EXPORT, type SandboxLimits } from '../../src/sandbox/types.js';
import { wat, watFixture } from '../helpers/wat.js';

const LIMITS: SandboxLimits = { maxModuleSize: 64 * 1024, maxMemoryPages: 1024, lowerMemoryMaximum: false, fuelPerExecution: 1_000_000n };

function variant(n: number): Promise<Uint8Array> {
  return wat(`(module (memory (export "memory") 1 1) (global (mut i32) (i32.const ${n})) (func (export "handle")))`);
}

function isError(code: string, reason: string) {
  return (error: unknown): boolean => error instanceof SvcError && error.code === code && error.metadata.reason === reason;
}

describe('createAdmission', () => {
  it('admits a module: hash of the original, info, compiled instrumented module', async () => {
    const bytes = await watFixture('valid/globals.wat');
    const admitted = await createAdmission(LIMITS).admit(bytes);
    assert.equal(admitted.sha256, createHash('sha256').update(bytes).digest('hex'));
    assert.equal(admitted.size, bytes.length);
    assert.deepEqual(admitted.info.mutableGlobals, [0, 2, 3, 4]);
    assert.deepEqual(admitted.globalExports, ['__svc_global_0', '__svc_global_2', '__svc_global_3', '__svc_global_4']);
    assert.ok(admitted.module instanceof WebAssembly.Module);
    const instance = await WebAssembly.instantiate(admitted.module);
    assert.equal((instance.exports[FUEL_EXPORT] as WebAssembly.Global).value, LIMITS.fuelPerExecution);
  });

  it('checks the size before anything else', async () => {
    const huge = new Uint8Array(LIMITS.maxModuleSize + 1).fill(0xff);
    await assert.rejects(createAdmission(LIMITS).admit(huge), (error: unknown) => {
      assert.ok(isError('PAYLOAD_TOO_LARGE', 'module_too_large')(error));
      assert.deepEqual((error as SvcError).metadata, { reason: 'module_too_large', limit: String(LIMITS.maxModuleSize), size: String(huge.length) });
      return true;
    });
  });

  it('rejects with the decoder verdict and does not cache rejections', async () => {
    const admission = createAdmission(LIMITS);
    const simd = await watFixture('reject/simd-instruction.wat', { simd: true });
    await assert.rejects(admission.admit(simd), isError('INVALID_MODULE', 'forbidden_feature'));
    await assert.rejects(admission.admit(new Uint8Array([1, 2, 3])), isError('INVALID_MODULE', 'malformed'));
    assert.equal(admission.stats().size, 0);
  });

  it('admits the same bytes once, sharing concurrent admissions', async () => {
    const admission = createAdmission(LIMITS);
    const bytes = await variant(1);
    const [a, b] = await Promise.all([admission.admit(bytes), admission.admit(bytes.slice())]);
    assert.equal(a, b);
    assert.equal(await admission.admit(bytes), a);
    assert.deepEqual(admission.stats(), { size: 1, capacity: 64, hits: 2, misses: 1 });
  });

  it('evicts the least recently used module past its bound', async () => {
    const admission = createAdmission(LIMITS, { cacheSize: 2 });
    const [m1, m2, m3] = await Promise.all([variant(1), variant(2), variant(3)]);
    const first = await admission.admit(m1);
    await admission.admit(m2);
    await admission.admit(m1); // m1 is now the most recent
    await admission.admit(m3); // evicts m2
    assert.equal(admission.stats().size, 2);
    assert.equal(await admission.admit(m1), first);
    const misses = admission.stats().misses;
    await admission.admit(m2);
    assert.equal(admission.stats().misses, misses + 1);
  });

  it('is not fooled by a caller that reuses its buffer', async () => {
    const admission = createAdmission(LIMITS);
    const bytes = await variant(7);
    const pending = admission.admit(bytes);
    bytes.fill(0);
    const admitted = await pending;
    assert.equal(admitted.info.exports.includes('handle'), true);
  });

  const buildDir = fileURLToPath(new URL('../../examples/build/', import.meta.url));
  const built = existsSync(buildDir) ? readdirSync(buildDir).filter((f) => f.endsWith('.wasm')) : [];
  it('admits the AssemblyScript example agents', { skip: built.length === 0 && 'examples not built (npm run build:examples)' }, async () => {
    const admission = createAdmission({ ...LIMITS, maxModuleSize: 1 << 20 });
    for (const file of built) {
      const admitted = await admission.admit(readFileSync(buildDir + file));
      assert.equal(admitted.info.startExport, '_initialize', file);
    }
  });
});
