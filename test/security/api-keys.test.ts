import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createApiKeys, type ApiKeys } from '../../src/security/api-keys.js';
import { formatKey, parseKey } from '../../src/security/api-key-format.js';
import { createKeyStore } from '../../src/security/store/key-store.js';
import { DAY, securityDb, type SecurityDb } from './security-fixtures.js';

let fx: SecurityDb;
let keys: ApiKeys;
before(() => {
  fx = securityDb();
  keys = createApiKeys({ store: createKeyStore(fx.db), clock: fx.wall, salt: 'test-salt', hashAlgorithm: 'sha256', gracePeriodMs: 7 * DAY, autoRotate: false, rotationIntervalMs: 30 * DAY });
});
after(() => fx.close());

test('a new key authenticates as key:<key_id> with its roles; its secret is shown once and stored only as a hash', () => {
  const { key, apiKey } = keys.create({ name: 'ops', roles: ['operator'], expiresInMs: undefined, rateLimitPerHour: 0 });
  const checked = keys.check(apiKey);
  assert.deepEqual(checked, { ok: true, principal: { id: `key:${key.key_id}`, roles: ['operator'], kind: 'api_key', keyId: key.key_id, keyRatePerHour: 0 } });
  const secret = parseKey(apiKey)?.secret ?? '';
  const row = fx.db.prepare('SELECT * FROM api_keys WHERE key_id = ?').get(key.key_id) as Record<string, unknown>;
  assert.ok(!JSON.stringify(row).includes(secret), 'the secret is not stored');
  assert.ok(!JSON.stringify(keys.list()).includes(secret) && !JSON.stringify(keys.list()).includes(String(row.secret_hash)), 'listing shows neither secret nor hash');
});

test('each way a key fails has its reason, and names the key id', () => {
  const { key, apiKey } = keys.create({ name: 'x', roles: ['viewer'], expiresInMs: DAY, rateLimitPerHour: 5 });
  const wrong = formatKey(key.key_id, 'B'.repeat(43));
  assert.deepEqual(keys.check(wrong), { ok: false, reason: 'wrong_secret', keyId: key.key_id });
  assert.deepEqual(keys.check(formatKey('aaaaaaaaaaaaaaaa', 'B'.repeat(43))), { ok: false, reason: 'unknown_key', keyId: 'aaaaaaaaaaaaaaaa' });
  assert.deepEqual(keys.check(`svc_${key.key_id}_short`), { ok: false, reason: 'malformed', keyId: key.key_id });
  assert.deepEqual(keys.check('nonsense'), { ok: false, reason: 'malformed', keyId: undefined });
  fx.clock.increment(DAY);
  assert.deepEqual(keys.check(apiKey), { ok: false, reason: 'expired', keyId: key.key_id });
  assert.equal(keys.roles(key.key_id), 'expired');
  const other = keys.create({ name: 'y', roles: ['viewer'], expiresInMs: undefined, rateLimitPerHour: 0 });
  keys.revoke(other.key.key_id);
  assert.deepEqual(keys.check(other.apiKey), { ok: false, reason: 'revoked', keyId: other.key.key_id });
  assert.equal(keys.roles(other.key.key_id), 'revoked');
  assert.throws(() => keys.revoke('aaaaaaaaaaaaaaaa'), /not found/);
  assert.throws(() => keys.rotate(other.key.key_id), /not found/, 'a revoked key cannot be rotated');
});

test('rotation: the old secret works through the grace period and not after; the new one works on', () => {
  const { key, apiKey: old } = keys.create({ name: 'rot', roles: ['viewer'], expiresInMs: undefined, rateLimitPerHour: 0 });
  const rotated = keys.rotate(key.key_id);
  assert.notEqual(rotated.apiKey, old);
  assert.equal(rotated.key.grace_until, fx.wall.now() + 7 * DAY);
  assert.equal(keys.check(old).ok, true);
  fx.clock.increment(7 * DAY - 1);
  assert.equal(keys.check(old).ok, true, 'one millisecond before the grace ends');
  fx.clock.increment(1);
  assert.deepEqual(keys.check(old), { ok: false, reason: 'grace_period_over', keyId: key.key_id });
  assert.equal(keys.check(rotated.apiKey).ok, true);
  assert.equal(keys.list().find((k) => k.key_id === key.key_id)?.grace_until, undefined);
});

test('auto_rotate: a secret older than the interval works for the grace period more, then is refused until rotated', () => {
  const auto = createApiKeys({ store: createKeyStore(fx.db), clock: fx.wall, salt: 'test-salt', hashAlgorithm: 'sha256', gracePeriodMs: 7 * DAY, autoRotate: true, rotationIntervalMs: 30 * DAY });
  const { key, apiKey } = auto.create({ name: 'auto', roles: ['viewer'], expiresInMs: undefined, rateLimitPerHour: 0 });
  fx.clock.increment(30 * DAY);
  assert.equal(auto.check(apiKey).ok, true);
  assert.deepEqual(auto.dueForRotation().map((k) => k.key_id).filter((id) => id === key.key_id), [key.key_id]);
  fx.clock.increment(7 * DAY);
  assert.deepEqual(auto.check(apiKey), { ok: false, reason: 'rotation_overdue', keyId: key.key_id });
  assert.equal(auto.roles(key.key_id), 'rotation_overdue');
  const rotated = auto.rotate(key.key_id);
  assert.equal(auto.check(rotated.apiKey).ok, true);
});

test('the bootstrap admin key is made, then kept, and put back when revoked', () => {
  const text = formatKey('bootstrapkeyaaaa', 'C'.repeat(43));
  keys.ensureAdmin(text, 'bootstrap admin');
  assert.deepEqual(keys.check(text), { ok: true, principal: { id: 'key:bootstrapkeyaaaa', roles: ['admin'], kind: 'api_key', keyId: 'bootstrapkeyaaaa', keyRatePerHour: 0 } });
  keys.revoke('bootstrapkeyaaaa');
  assert.equal(keys.check(text).ok, false);
  keys.ensureAdmin(text, 'bootstrap admin');
  assert.equal(keys.check(text).ok, true);
  assert.throws(() => keys.ensureAdmin('svc_nope', 'x'), /svc_<key_id>_<secret>/);
});
