import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EXIT, exitCodeFor } from '../../src/cli/exit-codes.js';
import { ERROR_CODES, type ErrorCode } from '../../src/errors/svc-error.js';

describe('exit codes', () => {
  it('are distinct', () => {
    const codes = Object.values(EXIT);
    assert.equal(new Set(codes).size, codes.length);
  });

  it('keep the values scripts already rely on', () => {
    assert.deepEqual([EXIT.ok, EXIT.failure, EXIT.usage, EXIT.config, EXIT.rejected], [0, 1, 2, 3, 4]);
  });

  const expected: Record<ErrorCode, number> = {
    INVALID_ARGUMENT: EXIT.rejected,
    INVALID_MODULE: EXIT.rejected,
    PAYLOAD_TOO_LARGE: EXIT.rejected,
    ALREADY_EXISTS: EXIT.rejected,
    FAILED_PRECONDITION: EXIT.rejected,
    NOT_FOUND: EXIT.not_found,
    UNAVAILABLE: EXIT.unavailable,
    DEADLINE_EXCEEDED: EXIT.unavailable,
    ABORTED: EXIT.unavailable,
    UNAUTHENTICATED: EXIT.denied,
    PERMISSION_DENIED: EXIT.denied,
    RESOURCE_EXHAUSTED: EXIT.limited,
    RATE_LIMITED: EXIT.limited,
    INTERNAL: EXIT.failure,
  };
  for (const code of ERROR_CODES) {
    it(`${code} exits ${expected[code]}`, () => assert.equal(exitCodeFor(code), expected[code]));
  }
});
