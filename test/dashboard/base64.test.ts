/** Module bytes to base64 (dashboard/lib/base64.js), as Node writes it, across the chunk size. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { bytesToBase64 } from '../../dashboard/lib/base64.js';
import { ECHO_WASM } from '../api/http/http-fixtures.js';

describe('bytesToBase64', () => {
  it('matches Buffer for empty, short, chunk-sized and larger inputs', () => {
    for (const size of [0, 1, 2, 3, 0x7fff, 0x8000, 0x8001, 100_000]) {
      const bytes = new Uint8Array(size).map((_, i) => (i * 31 + 7) & 0xff);
      assert.equal(bytesToBase64(bytes), Buffer.from(bytes).toString('base64'), String(size));
    }
  });
  it('a real module', () => {
    assert.equal(bytesToBase64(new Uint8Array(ECHO_WASM)), readFileSync(new URL('../../examples/build/echo.wasm', import.meta.url)).toString('base64'));
  });
});
