/**
 * Every module of test/fixtures/reject deployed over gRPC: each fails with
 * INVALID_MODULE (status INVALID_ARGUMENT) and the `svc-error-bin` trailer
 * carries the sandbox's metadata exactly as admission produced it. Each
 * fixture's first comment names its reason (and feature), e.g.
 * `;; forbidden_feature simd: ...`, so a fixture added later is covered
 * without touching this file. Reason `invalid_module` (the allowlist decoder
 * accepts, the engine's validation refuses) has no fixture, since wabt would
 * refuse to assemble it; its bytes come from test/helpers/wasm-bytes.ts.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { status } from '@grpc/grpc-js';
import { createAdmission } from '../../../src/sandbox/admission.js';
import { sandboxLimitsFrom } from '../../../src/sandbox/limits.js';
import { SvcError } from '../../../src/errors/svc-error.js';
import { testConfig } from '../../agents/agent-fixtures.js';
import { watFixture, type WatFeatures } from '../../helpers/wat.js';
import { engineOnlyTypeError } from '../../helpers/wasm-bytes.js';
import { assertError, failure, startGrpcTestServer, SUITE_TIMEOUT, type GrpcTestServer } from './grpc-harness.js';

const REJECT_DIR = fileURLToPath(new URL('../../fixtures/reject/', import.meta.url));
/** Every proposal wabt knows, so each hostile fixture can be written down at all; admission refuses them regardless. */
const ALL_FEATURES: WatFeatures = {
  exceptions: true, simd: true, threads: true, tail_call: true, bulk_memory: true, reference_types: true,
  memory64: true, gc: true, extended_const: true, relaxed_simd: true, function_references: true,
};

const fixtures = readdirSync(REJECT_DIR).filter((f) => f.endsWith('.wat')).sort();

/** `;; forbidden_feature simd: ...` → { reason: 'forbidden_feature', feature: 'simd' }. */
function expectedFrom(file: string): Record<string, string> {
  const match = /^;; ([a-z_]+)(?: ([a-z0-9_]+))?/.exec(readFileSync(REJECT_DIR + file, 'utf8'));
  assert.ok(match, `${file} starts with ';; <reason>'`);
  const [, reason = '', detail] = match;
  return reason === 'forbidden_feature' && detail !== undefined ? { reason, feature: detail } : { reason };
}

describe('every sandbox rejection surfaces as INVALID_MODULE with its metadata', SUITE_TIMEOUT, () => {
  let s: GrpcTestServer;
  let admit: (bytes: Uint8Array) => Promise<unknown>;
  before(async () => {
    s = await startGrpcTestServer();
    admit = (bytes) => createAdmission(sandboxLimitsFrom(testConfig(s.t.dir).runtime)).admit(bytes);
  });
  after(() => s.stop());

  it('has fixtures to run', () => assert.ok(fixtures.length >= 40, String(fixtures.length)));

  for (const file of fixtures) {
    it(file, async () => {
      const bytes = await watFixture(`reject/${file}`, ALL_FEATURES);
      const local = await admit(bytes).then(
        () => assert.fail(`${file} passes admission`),
        (error: unknown) => error,
      );
      assert.ok(local instanceof SvcError);
      const remote = await failure(s.client.deploy({ name: `reject-${file.replace('.wat', '')}`, wasm_module: bytes }));
      assertError(remote, 'INVALID_MODULE', status.INVALID_ARGUMENT, expectedFrom(file));
      assert.deepEqual(remote.body.metadata, local.metadata, 'the trailer carries admission\'s metadata unchanged');
      assert.equal(remote.body.message, local.message);
    });
  }

  it('a module only the engine refuses: invalid_module', async () => {
    const bytes = engineOnlyTypeError();
    const remote = await failure(s.client.deploy({ name: 'reject-engine-only-type-error', wasm_module: bytes }));
    assertError(remote, 'INVALID_MODULE', status.INVALID_ARGUMENT);
    assert.deepEqual(remote.body.metadata, { reason: 'invalid_module' });
    assert.equal(remote.body.message, 'the module is not valid WebAssembly');
  });

  it('deployed none of them', async () => {
    assert.equal((await s.client.list()).agents.length, 0);
  });
});
