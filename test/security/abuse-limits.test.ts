/** The in-memory limits: per source, per key, failed-auth blocking (rate-limiter-flexible underneath). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SvcError } from '../../src/errors/svc-error.js';
import { createRateLimits } from '../../src/security/rate-limits.js';
import { createSourceBlocker } from '../../src/security/source-block.js';
import type { Principal } from '../../src/security/principal.js';

const anonymous: Principal = { id: 'anonymous', roles: [], kind: 'anonymous' };

async function refusal(promise: Promise<unknown>): Promise<SvcError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof SvcError, String(err));
    return err;
  }
  assert.fail('not refused');
}

test('per source: the sustained rate plus the burst, then RATE_LIMITED with Retry-After; other sources are not affected', async () => {
  const limits = createRateLimits({ enabled: true, perSecond: 3, burst: 2, keyPerHour: 1_000_000, keyBurst: 1 });
  for (let i = 0; i < 5; i++) await limits.consume(anonymous, '10.0.0.1');
  const error = await refusal(limits.consume(anonymous, '10.0.0.1'));
  assert.equal(error.code, 'RATE_LIMITED');
  assert.equal(error.metadata.reason, 'rate_limit');
  assert.ok(Number(error.metadata.retry_after_seconds) >= 1, JSON.stringify(error.metadata));
  await limits.consume(anonymous, '10.0.0.2');
  // Authenticated callers are counted by principal, whatever address they come from.
  const alice: Principal = { id: 'alice', roles: [], kind: 'jwt' };
  for (let i = 0; i < 5; i++) await limits.consume(alice, `10.1.0.${i}`);
  assert.equal((await refusal(limits.consume(alice, '10.9.9.9'))).metadata.reason, 'rate_limit');
});

test('per key: a sixtieth of its hourly rate a minute plus burst_limit; a key\'s own rate wins over the setting', async () => {
  const limits = createRateLimits({ enabled: true, perSecond: 1_000, burst: 1_000, keyPerHour: 120, keyBurst: 1 });
  const key = (id: string, own = 0): Principal => ({ id: `key:${id}`, roles: [], kind: 'api_key', keyId: id, keyRatePerHour: own });
  for (let i = 0; i < 3; i++) await limits.consume(key('aaaa'), '10.0.0.1');
  const error = await refusal(limits.consume(key('aaaa'), '10.0.0.1'));
  assert.equal(error.metadata.reason, 'key_rate_limit');
  assert.equal(error.metadata.key_id, 'aaaa');
  for (let i = 0; i < 61; i++) await limits.consume(key('bbbb', 3_600), '10.0.0.1');
  assert.equal((await refusal(limits.consume(key('bbbb', 3_600), '10.0.0.1'))).metadata.reason, 'key_rate_limit');
});

test('disabled, nothing is limited', async () => {
  const limits = createRateLimits({ enabled: false, perSecond: 1, burst: 1, keyPerHour: 1, keyBurst: 1 });
  for (let i = 0; i < 50; i++) await limits.consume(anonymous, '10.0.0.1');
});

test('failed authentication: more than max failures within the window blocks the address and the key id named', async () => {
  const blocker = createSourceBlocker({ enabled: true, maxFailures: 3, windowMs: 300_000, blockMs: 900_000 });
  for (let i = 1; i <= 3; i++) {
    await blocker.check('10.0.0.1', 'keyaaaaaaaaaaaaa');
    assert.equal(await blocker.failed('10.0.0.1', 'keyaaaaaaaaaaaaa'), false, `failure ${i} does not block`);
  }
  assert.equal(await blocker.failed('10.0.0.1', 'keyaaaaaaaaaaaaa'), true, 'the fourth does');
  const blocked = await refusal(blocker.check('10.0.0.1', undefined));
  assert.deepEqual({ code: blocked.code, reason: blocked.metadata.reason }, { code: 'RATE_LIMITED', reason: 'auth_blocked' });
  assert.ok(Number(blocked.metadata.retry_after_seconds) > 890 && Number(blocked.metadata.retry_after_seconds) <= 900, blocked.metadata.retry_after_seconds);
  assert.equal((await refusal(blocker.check('10.0.0.2', 'keyaaaaaaaaaaaaa'))).metadata.reason, 'auth_blocked', 'the key id is blocked from any address');
  await blocker.check('10.0.0.2', 'keybbbbbbbbbbbbb');
});

test('with auto_block_suspicious_ips off nothing is blocked', async () => {
  const blocker = createSourceBlocker({ enabled: false, maxFailures: 1, windowMs: 1_000, blockMs: 1_000 });
  for (let i = 0; i < 5; i++) assert.equal(await blocker.failed('10.0.0.1', undefined), false);
  await blocker.check('10.0.0.1', undefined);
});
