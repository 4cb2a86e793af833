import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { AuthFailure } from '../../src/security/auth-failure.js';
import { createJwtVerifier } from '../../src/security/jwt-verifier.js';
import type { SigningKey } from '../../src/security/jwt-signing-key.js';
import type { Principal } from '../../src/security/principal.js';
import { createRefreshStore } from '../../src/security/store/refresh-store.js';
import { createTokenService, type TokenService } from '../../src/security/token-service.js';
import { DAY, HOUR, securityDb, type SecurityDb } from './security-fixtures.js';

let fx: SecurityDb;
let keyRoles: (keyId: string) => readonly string[] | 'revoked';
const pem = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const signWith = createPrivateKey(pem);
const signing: SigningKey = { algorithm: 'EdDSA', signWith, verifyWith: createPublicKey(signWith), kid: 'k1' };
const alice: Principal = { id: 'alice', roles: ['viewer'], kind: 'jwt' };

function service(rotation = true): TokenService {
  return createTokenService({
    signing,
    issuer: 'svc',
    audience: 'svc',
    rolesClaim: 'roles',
    accessTtlMs: HOUR,
    refreshTtlMs: DAY,
    rotation,
    store: createRefreshStore(fx.db),
    clock: fx.wall,
    keyRoles: (keyId) => keyRoles(keyId),
  });
}

async function failure(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof AuthFailure, String(err));
    return err.detail;
  }
  return 'accepted';
}

before(() => {
  fx = securityDb();
  keyRoles = () => ['operator'];
});
after(() => fx.close());

test('an issued pair: a JWT of the configured lifetime the verifier accepts, and an opaque refresh token', async () => {
  const pair = await service().issue(alice);
  assert.equal(pair.token_type, 'Bearer');
  assert.equal(pair.expires_in, 3600);
  assert.match(pair.refresh_token, /^[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$/);
  assert.deepEqual(decodeProtectedHeader(pair.access_token), { alg: 'EdDSA', kid: 'k1', typ: 'at+jwt' });
  const claims = decodeJwt(pair.access_token);
  assert.equal(claims.exp! - claims.iat!, 3600);
  const verifier = createJwtVerifier({ issuers: [{ issuer: 'svc', algorithms: ['EdDSA'], keys: [signing.verifyWith] }], audience: 'svc', rolesClaim: 'roles', clock: fx.wall });
  assert.deepEqual(await verifier.verify(pair.access_token), { id: 'alice', roles: ['viewer'], kind: 'jwt' });
  const row = fx.db.prepare('SELECT token_hash FROM refresh_tokens').all();
  assert.ok(!JSON.stringify(row).includes(pair.refresh_token.split('.')[1]!), 'only a hash of the refresh secret is stored');
});

test('rotation: each refresh spends its token; presenting a spent one revokes the whole family', async () => {
  const tokens = service();
  const first = await tokens.issue(alice);
  const second = await tokens.refresh(first.refresh_token);
  assert.notEqual(second.refresh_token, first.refresh_token);
  assert.equal(second.principal.id, 'alice');
  const third = await tokens.refresh(second.refresh_token);
  assert.equal(await failure(tokens.refresh(first.refresh_token)), 'refresh_reuse');
  assert.equal(await failure(tokens.refresh(third.refresh_token)), 'revoked', 'the family is dead, the newest token too');
});

test('without rotation the same refresh token keeps working until the family expires', async () => {
  const tokens = service(false);
  const first = await tokens.issue(alice);
  assert.equal((await tokens.refresh(first.refresh_token)).refresh_token, first.refresh_token);
  assert.equal((await tokens.refresh(first.refresh_token)).refresh_token, first.refresh_token);
  fx.clock.increment(DAY);
  assert.equal(await failure(tokens.refresh(first.refresh_token)), 'expired');
});

test('a family made from a key follows the key: its roles now, and its end', async () => {
  const tokens = service();
  const pair = await tokens.issue({ id: 'key:abc', roles: ['viewer'], kind: 'api_key', keyId: 'abcdefghijklmnop' });
  keyRoles = () => ['admin'];
  const refreshed = await tokens.refresh(pair.refresh_token);
  assert.deepEqual(decodeJwt(refreshed.access_token).roles, ['admin']);
  keyRoles = () => 'revoked';
  assert.equal(await failure(tokens.refresh(refreshed.refresh_token)), 'revoked');
  keyRoles = () => ['operator'];
  assert.equal(await failure(tokens.refresh(refreshed.refresh_token)), 'revoked', 'the family was revoked with the key');
});

test('refresh tokens that are not ours are refused without touching a family', async () => {
  const tokens = service();
  const pair = await tokens.issue(alice);
  const [id] = pair.refresh_token.split('.');
  assert.equal(await failure(tokens.refresh('nonsense')), 'malformed');
  assert.equal(await failure(tokens.refresh(`${'A'.repeat(22)}.${'B'.repeat(43)}`)), 'revoked');
  assert.equal(await failure(tokens.refresh(`${id}.${'B'.repeat(43)}`)), 'wrong_secret');
  assert.ok((await tokens.refresh(pair.refresh_token)).access_token, 'a wrong secret did not spend the token');
});
