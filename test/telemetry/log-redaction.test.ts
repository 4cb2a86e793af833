import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isSecretKey, MAX_ARRAY_ITEMS, MAX_DEPTH, MAX_STRING_CHARS, REDACTED, redactFields } from '../../src/telemetry/log-redaction.js';

test('secret keys whatever their spelling; look-alikes that are not secrets pass', () => {
  const secret = ['token', 'Token', 'access_token', 'refreshToken', 'authorization', 'Proxy-Authorization', 'api_key', 'apiKey', 'X-API-Key',
    'password', 'db_password', 'passwd', 'client_secret', 'secret', 'private_key', 'cookie', 'Set-Cookie', 'wasm_module', 'wasmModule', 'module', 'jwt'];
  const plain = ['page_token', 'next_page_token', 'tokens_used', 'module_sha256', 'module_size', 'key', 'agent_id', 'authorized', 'content_type'];
  for (const key of secret) assert.ok(isSecretKey(key), key);
  for (const key of plain) assert.ok(!isSecretKey(key), key);
});

test('content is redacted unless kept, at any depth', () => {
  const fields = { content: 'top', batch: [{ content: 'inside an array' }], event: { message: { content: 'nested' } } };
  assert.deepEqual(redactFields(fields, { keepContent: false }), {
    content: REDACTED,
    batch: [{ content: REDACTED }],
    event: { message: { content: REDACTED } },
  });
  assert.deepEqual(redactFields(fields, { keepContent: true }), fields);
});

test('values that JSON cannot encode or that would bloat a line are made safe', () => {
  const cycle: Record<string, unknown> = { name: 'loop' };
  cycle.self = cycle;
  let deep: Record<string, unknown> = { leaf: true };
  for (let i = 0; i < MAX_DEPTH + 2; i++) deep = { deep };
  const out = redactFields(
    {
      cycle,
      deep,
      big: 12345678901234567890n,
      fn: () => 1,
      list: Array.from({ length: MAX_ARRAY_ITEMS + 5 }, (_, i) => i),
      long: 'x'.repeat(MAX_STRING_CHARS + 10),
      view: new DataView(new ArrayBuffer(16)),
      err: Object.assign(new Error('failed'), { code: 'E_X' }),
      when: new Date(0),
    },
    { keepContent: false },
  );
  assert.deepEqual(out.cycle, { name: 'loop', self: '[circular]' });
  assert.match(JSON.stringify(out.deep), /\[truncated\]/);
  assert.equal(out.big, '12345678901234567890');
  assert.equal(out.fn, undefined);
  assert.equal((out.list as unknown[]).length, MAX_ARRAY_ITEMS + 1);
  assert.equal((out.list as unknown[]).at(-1), '[+5 items]');
  assert.ok((out.long as string).endsWith('…[+10 chars]'));
  assert.equal(out.view, '[16 bytes]');
  assert.deepEqual({ ...(out.err as object), stack: undefined }, { message: 'failed', name: 'Error', code: 'E_X', signal: undefined, stack: undefined });
  assert.deepEqual(out.when, new Date(0), 'dates are kept for JSON to write as RFC 3339');
  assert.doesNotThrow(() => JSON.stringify(out));
});

test('a shared, non-circular object is written twice, not marked circular', () => {
  const shared = { id: 1 };
  assert.deepEqual(redactFields({ a: shared, b: [shared, shared] }, { keepContent: false }), { a: { id: 1 }, b: [{ id: 1 }, { id: 1 }] });
});
