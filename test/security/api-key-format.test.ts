import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatKey, hashesEqual, hashSecret, keyIdOf, newKeyId, newSecret, parseKey } from '../../src/security/api-key-format.js';

test('a new key is svc_<key_id>_<secret> and parses back, whatever its secret holds', () => {
  for (let i = 0; i < 200; i++) {
    const keyId = newKeyId();
    const secret = newSecret();
    assert.match(keyId, /^[a-z2-7]{16}$/);
    assert.match(secret, /^[A-Za-z0-9_-]{43}$/);
    assert.deepEqual(parseKey(formatKey(keyId, secret)), { keyId, secret });
  }
  assert.deepEqual(parseKey(`svc_abcdefghijklmnop_${'_'.repeat(43)}`), { keyId: 'abcdefghijklmnop', secret: '_'.repeat(43) });
});

test('anything else is no key', () => {
  const secret = 'A'.repeat(43);
  for (const text of ['', 'svc_', 'svc_abcdefghijklmnop', `svx_abcdefghijklmnop_${secret}`, `svc_ABCDEFGHIJKLMNOP_${secret}`, `svc_abcdefghijklmno_${secret}`, `svc_abcdefghijklmnop_${secret}A`, `svc_abcdefghijklmnop_${'A'.repeat(42)}=`, `Bearer svc_abcdefghijklmnop_${secret}`]) {
    assert.equal(parseKey(text), undefined, text);
  }
});

test('the key id of a key-shaped text is read even when its secret is malformed, so failures count against it', () => {
  assert.equal(keyIdOf('svc_abcdefghijklmnop_short'), 'abcdefghijklmnop');
  assert.equal(keyIdOf('svc_abc_short'), undefined);
  assert.equal(keyIdOf('anything'), undefined);
});

test('hashes depend on the salt, the secret and the algorithm, and compare only when equal', () => {
  const a = hashSecret('sha256', 'salt', 'secret');
  assert.match(a, /^[0-9a-f]{64}$/);
  assert.equal(hashSecret('sha256', 'salt', 'secret'), a);
  assert.notEqual(hashSecret('sha256', 'other', 'secret'), a);
  assert.notEqual(hashSecret('sha256', 'salt', 'secreT'), a);
  assert.match(hashSecret('sha512', 'salt', 'secret'), /^[0-9a-f]{128}$/);
  assert.equal(hashesEqual(a, a), true);
  assert.equal(hashesEqual(a, hashSecret('sha256', 'salt', 'x')), false);
  assert.equal(hashesEqual(a, hashSecret('sha512', 'salt', 'secret')), false, 'different lengths');
});
