import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, createSecretKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { createLocalJWKSet, exportJWK, SignJWT } from 'jose';
import { createSimulatedClock } from '../../supervisors/clock-simulated.js';
import { AuthFailure } from '../../src/security/auth-failure.js';
import { ASYMMETRIC_ALGORITHMS, createJwtVerifier, type JwtVerifier } from '../../src/security/jwt-verifier.js';
import { EPOCH } from './security-fixtures.js';

const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const idp = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const stranger = generateKeyPairSync('rsa', { modulusLength: 2048 });
const clock = createSimulatedClock();
const wall = { now: () => EPOCH + clock.now() };
const nowSeconds = (): number => Math.floor(wall.now() / 1000);

async function verifierWith(algorithm = 'RS256'): Promise<JwtVerifier> {
  const jwks = createLocalJWKSet({ keys: [{ ...(await exportJWK(idp.publicKey)), kid: 'idp-1', alg: 'ES256' }] });
  return createJwtVerifier({
    issuers: [
      { issuer: 'svc', algorithms: [algorithm], keys: [rsa.publicKey] },
      { issuer: 'https://idp.example', algorithms: ASYMMETRIC_ALGORITHMS, jwks },
    ],
    audience: 'svc',
    rolesClaim: 'realm.roles',
    clock: wall,
  });
}

interface Claims {
  iss?: string;
  aud?: string;
  sub?: string;
  exp?: number;
  nbf?: number;
  realm?: unknown;
}

function sign(claims: Claims, key: KeyObject = rsa.privateKey, alg = 'RS256', kid?: string): Promise<string> {
  return new SignJWT({ ...claims }).setProtectedHeader({ alg, ...(kid === undefined ? {} : { kid }) }).sign(key);
}

const base = (): Claims => ({ iss: 'svc', aud: 'svc', sub: 'alice', exp: nowSeconds() + 600, realm: { roles: ['operator', 'viewer'] } });

async function reason(verifier: JwtVerifier, token: string): Promise<string> {
  try {
    await verifier.verify(token);
  } catch (err) {
    assert.ok(err instanceof AuthFailure, String(err));
    assert.equal(err.code, 'UNAUTHENTICATED');
    return err.detail;
  }
  return 'accepted';
}

function b64(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

test('a valid token names its subject and the roles of the (nested) roles claim', async () => {
  const verifier = await verifierWith();
  assert.deepEqual(await verifier.verify(await sign(base())), { id: 'alice', roles: ['operator', 'viewer'], kind: 'jwt' });
  const spaced = await sign({ ...base(), realm: { roles: 'agent viewer' } });
  assert.deepEqual((await verifier.verify(spaced)).roles, ['agent', 'viewer']);
});

test('every way a token fails has its reason', async () => {
  const verifier = await verifierWith();
  const good = await sign(base());
  const [header, payload, signature] = good.split('.') as [string, string, string];
  const flipped = `${header}.${payload}.${signature.slice(0, -4)}${signature.slice(-4) === 'AAAA' ? 'BBBB' : 'AAAA'}`;
  const pem = rsa.publicKey.export({ type: 'spki', format: 'pem' });
  const confusedHead = b64({ alg: 'HS256', typ: 'JWT' });
  const confusedBody = b64(base());
  const confused = `${confusedHead}.${confusedBody}.${createHmac('sha256', pem).update(`${confusedHead}.${confusedBody}`).digest('base64url')}`;
  const cases: Array<[string, Promise<string>, string]> = [
    ['expired', sign({ ...base(), exp: nowSeconds() - 31 }), 'expired'],
    ['not yet valid', sign({ ...base(), nbf: nowSeconds() + 31 }), 'not_yet_valid'],
    ['wrong audience', sign({ ...base(), aud: 'someone-else' }), 'wrong_audience'],
    ['wrong issuer', sign({ ...base(), iss: 'https://evil.example' }), 'wrong_issuer'],
    ['no issuer', sign({ aud: 'svc', sub: 'alice', exp: nowSeconds() + 60 }), 'wrong_issuer'],
    ['no subject', sign({ iss: 'svc', aud: 'svc', exp: nowSeconds() + 60 }), 'no_subject'],
    ['no expiry', sign({ iss: 'svc', aud: 'svc', sub: 'alice' }), 'malformed'],
    ['bad signature', Promise.resolve(flipped), 'bad_signature'],
    ['another key', sign(base(), stranger.privateKey), 'bad_signature'],
    ['alg none', Promise.resolve(`${b64({ alg: 'none', typ: 'JWT' })}.${b64(base())}.`), 'unsupported_algorithm'],
    ['HS256 signed with the RS256 public key', Promise.resolve(confused), 'unsupported_algorithm'],
    ['HS256 with a random secret', sign(base(), createSecretKey(Buffer.alloc(32, 7)), 'HS256'), 'unsupported_algorithm'],
    ['not a JWT', Promise.resolve('not.a.jwt'), 'malformed'],
    ['garbage', Promise.resolve('garbage'), 'malformed'],
  ];
  for (const [name, token, expected] of cases) assert.equal(await reason(verifier, await token), expected, name);
});

test('30 s of leeway on exp and nbf', async () => {
  const verifier = await verifierWith();
  assert.equal((await verifier.verify(await sign({ ...base(), exp: nowSeconds() - 29 }))).id, 'alice');
  assert.equal((await verifier.verify(await sign({ ...base(), nbf: nowSeconds() + 29 }))).id, 'alice');
});

test('the OAuth issuer\'s tokens verify through its JWKS, never with a shared secret', async () => {
  const verifier = await verifierWith();
  const token = await sign({ ...base(), iss: 'https://idp.example', sub: 'bob' }, idp.privateKey, 'ES256', 'idp-1');
  assert.equal((await verifier.verify(token)).id, 'bob');
  assert.equal(await reason(verifier, await sign({ ...base(), iss: 'https://idp.example' }, idp.privateKey, 'ES256', 'unknown-kid')), 'bad_signature');
  assert.equal(await reason(verifier, await sign({ ...base(), iss: 'https://idp.example' }, createSecretKey(Buffer.alloc(32, 1)), 'HS256', 'idp-1')), 'unsupported_algorithm');
});

test('a verified token is cached for its remaining life: the next check is synchronous, and it ends with the token', async () => {
  const verifier = await verifierWith();
  const token = await sign({ ...base(), exp: nowSeconds() + 120 });
  assert.ok(verifier.verify(token) instanceof Promise, 'first use verifies the signature');
  await verifier.verify(token);
  const cached = verifier.verify(token);
  assert.ok(!(cached instanceof Promise), 'then a map lookup');
  assert.equal((cached as { id: string }).id, 'alice');
  clock.increment((120 + 30) * 1000);
  assert.equal(await reason(verifier, token), 'expired', 'past exp and the leeway it is verified again, and refused');
});

test('HS256 only where configured, with its secret', async () => {
  const secret = createSecretKey(Buffer.from('x'.repeat(32)));
  const verifier = createJwtVerifier({ issuers: [{ issuer: 'svc', algorithms: ['HS256'], keys: [secret] }], audience: 'svc', rolesClaim: 'roles', clock: wall });
  assert.equal((await verifier.verify(await sign(base(), secret, 'HS256'))).id, 'alice');
  assert.equal(await reason(verifier, await sign(base())), 'unsupported_algorithm', 'an RS256 token is not accepted there');
});
