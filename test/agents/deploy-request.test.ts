import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_CPU_SHARES, MAX_CAPABILITIES, MAX_CPU_SHARES, validateDeployRequest } from '../../src/agents/deploy-request.js';
import { isSvcError } from '../../src/errors/svc-error.js';

const LIMITS = { maxMemoryBytes: 64 * 1024 * 1024 };
const MODULE = new Uint8Array([0, 97, 115, 109]);
const valid = { name: 'worker', wasm_module: MODULE, capabilities: ['search'], resources: { memory_limit: 1 << 20, cpu_shares: 512 } };

describe('deploy request validation', () => {
  it('accepts a request and resolves 0 to the defaults', () => {
    assert.deepEqual(validateDeployRequest(valid, LIMITS), { name: 'worker', module: MODULE, capabilities: ['search'], memoryLimitBytes: 1 << 20, cpuShares: 512 });
    const defaults = validateDeployRequest({ name: 'w', wasm_module: MODULE }, LIMITS);
    assert.deepEqual([defaults.memoryLimitBytes, defaults.cpuShares, defaults.capabilities], [LIMITS.maxMemoryBytes, DEFAULT_CPU_SHARES, []]);
  });

  it('reads lowerCamelCase and proto3 JSON strings for 64-bit numbers; drops repeated capabilities', () => {
    const camel = validateDeployRequest({ name: 'w', wasmModule: MODULE, capabilities: ['a', 'a', 'b'], resources: { memoryLimit: '65536', cpuShares: 2 } }, LIMITS);
    assert.deepEqual([camel.memoryLimitBytes, camel.cpuShares, camel.capabilities], [65_536, 2, ['a', 'b']]);
  });

  it('accepts surrogate pairs (an emoji) in the name and capabilities', () => {
    const deploy = validateDeployRequest({ ...valid, name: 'worker 😀', capabilities: ['😀'] }, LIMITS);
    assert.deepEqual([deploy.name, deploy.capabilities], ['worker 😀', ['😀']]);
  });

  const refusals: Array<[string, unknown, string, string]> = [
    ['not an object', 'deploy!', 'request', 'wrong_type'],
    ['no name', { ...valid, name: undefined }, 'name', 'wrong_type'],
    ['a blank name', { ...valid, name: '  ' }, 'name', 'required'],
    ['a name with a newline', { ...valid, name: 'a\nb' }, 'name', 'control_characters'],
    ['a name too long', { ...valid, name: 'x'.repeat(257) }, 'name', 'too_long'],
    ['a name with a lone high surrogate', { ...valid, name: 'a\ud800b' }, 'name', 'invalid_utf16'],
    ['a name with a lone low surrogate', { ...valid, name: 'a\udc00b' }, 'name', 'invalid_utf16'],
    ['a name with a reversed pair', { ...valid, name: '\udc00\ud800' }, 'name', 'invalid_utf16'],
    ['a name ending in a high surrogate', { ...valid, name: 'worker\ud83d' }, 'name', 'invalid_utf16'],
    ['a name shaped like an agent id', { ...valid, name: '01J9Z3K4TQ8W5V6X7Y8Z9A0B1C' }, 'name', 'reserved'],
    ['a name shaped like an agent id, lower case', { ...valid, name: '01j9z3k4tq8w5v6x7y8z9a0b1c' }, 'name', 'reserved'],
    ['a name shaped like a client', { ...valid, name: 'client:alice' }, 'name', 'reserved'],
    ['the platform sender as a name', { ...valid, name: 'platform' }, 'name', 'reserved'],
    ['no module', { ...valid, wasm_module: undefined }, 'wasm_module', 'required'],
    ['an empty module', { ...valid, wasm_module: new Uint8Array() }, 'wasm_module', 'required'],
    ['a module as text', { name: 'w', wasmModule: 'AGFzbQ==' }, 'wasmModule', 'wrong_type'],
    ['capabilities not a list', { ...valid, capabilities: 'a,b' }, 'capabilities', 'wrong_type'],
    ['too many capabilities', { ...valid, capabilities: Array.from({ length: MAX_CAPABILITIES + 1 }, (_, i) => `c${i}`) }, 'capabilities', 'too_many_entries'],
    ['a capability not a string', { ...valid, capabilities: ['a', 3] }, 'capabilities[1]', 'wrong_type'],
    ['a capability with a lone surrogate', { ...valid, capabilities: ['a', 'b\udc00'] }, 'capabilities[1]', 'invalid_utf16'],
    ['resources not an object', { ...valid, resources: 5 }, 'resources', 'wrong_type'],
    ['memory over the maximum', { ...valid, resources: { memory_limit: LIMITS.maxMemoryBytes + 1 } }, 'resources.memory_limit', 'out_of_range'],
    ['a fractional memory', { ...valid, resources: { memory_limit: 1.5 } }, 'resources.memory_limit', 'wrong_type'],
    ['negative shares', { ...valid, resources: { cpuShares: -2 } }, 'resources.cpuShares', 'wrong_type'],
    ['shares over the maximum', { ...valid, resources: { cpu_shares: MAX_CPU_SHARES + 1 } }, 'resources.cpu_shares', 'out_of_range'],
  ];
  for (const [what, input, field, reason] of refusals) {
    it(`refuses ${what}: INVALID_ARGUMENT, field ${field}, reason ${reason}`, () => {
      assert.throws(
        () => validateDeployRequest(input, LIMITS),
        (error) => isSvcError(error) && error.code === 'INVALID_ARGUMENT' && error.metadata['field'] === field && error.metadata['reason'] === reason,
      );
    });
  }
});
