/** createSecurity from the configuration: what it makes in the data directory and what it refuses, naming the setting. */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSimulatedClock } from '../../supervisors/clock-simulated.js';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import type { SecuredCall } from '../../src/security/gate.js';
import { createSecurity } from '../../src/security/security.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-security-setup-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const ADMIN = `svc_setupsetupsetup2_${'Z'.repeat(43)}`;

function configWith(env: Record<string, string>) {
  return loadConfig({ env: { SVC_SECURITY_AUTH_ENABLED: 'true', ...env }, cwd: dir });
}

test('the salt and the signing key are made once in the data directory, mode 0600, and kept across restarts', async () => {
  const data = join(dir, 'kept');
  const first = await createSecurity(configWith({ SVC_SECURITY_BOOTSTRAP_ADMIN_KEY: ADMIN }), { dataDir: data, clock: createSimulatedClock() });
  const token = await first.service.createToken({}, { operation: 'CreateToken', credentials: {}, sourceIp: '127.0.0.1', userAgent: 't', traceId: 'x', principal: { id: 'key:setupsetupsetup2', roles: ['admin'], kind: 'api_key' }, resource: '' });
  first.close();
  for (const file of ['salt', 'jwt-rs256.pem']) assert.equal(statSync(join(data, 'security', file)).mode & 0o777, 0o600, file);
  assert.equal(statSync(join(data, 'security')).mode & 0o777, 0o700);
  const second = await createSecurity(configWith({}), { dataDir: data, clock: createSimulatedClock() });
  try {
    assert.equal(second.keys.check(ADMIN).ok, true, 'the key still verifies: same salt');
    const call: SecuredCall = { operation: 'ListAgents', credentials: { authorization: `Bearer ${token.access_token}` }, sourceIp: '127.0.0.1', userAgent: 't', traceId: 'x', principal: undefined, resource: '' };
    await second.gate.authenticate(call);
    assert.equal(call.principal?.id, 'key:setupsetupsetup2', 'a token of the first start verifies: same signing key');
  } finally {
    second.close();
  }
});

test('what cannot work stops the start, naming the setting', async () => {
  const ec = join(dir, 'ec.pem');
  writeFileSync(ec, generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }));
  writeFileSync(join(dir, 'garbage.pem'), 'not a key');
  const cases: Array<[Record<string, string>, string, RegExp]> = [
    [{ SVC_SECURITY_BOOTSTRAP_ADMIN_KEY: 'svc_short_secret' }, 'security.bootstrap_admin_key', /svc_<key_id>_<secret>/],
    [{ SVC_SECURITY_JWT_PRIVATE_KEY_FILE: ec }, 'security.jwt_private_key_file', /RS256 needs an RSA key/],
    [{ SVC_SECURITY_JWT_PRIVATE_KEY_FILE: join(dir, 'garbage.pem') }, 'security.jwt_private_key_file', /cannot read/],
    [{ SVC_SECURITY_JWT_PUBLIC_KEY_FILE: join(dir, 'missing.pem') }, 'security.jwt_public_key_file', /cannot read/],
    [{ SVC_SECURITY_OAUTH_ISSUER: 'https://idp.example', SVC_SECURITY_JWT_ISSUER: 'https://idp.example' }, 'security.jwt_issuer', /must differ/],
    [{ SVC_SECURITY_POLICY_FILE: join(dir, 'missing.csv') }, 'security.policy_file', /cannot read/],
  ];
  for (const [env, key, pattern] of cases) {
    await assert.rejects(
      createSecurity(configWith(env), { dataDir: join(dir, 'refused'), clock: createSimulatedClock() }),
      (err: unknown) => err instanceof ConfigError && err.key === key && pattern.test(err.message),
      JSON.stringify(env),
    );
  }
});

test('with auth off every caller is anonymous with every permission, and the start line says so', async () => {
  const security = await createSecurity(loadConfig({ env: {}, cwd: dir }), { dataDir: join(dir, 'open'), clock: createSimulatedClock() });
  try {
    const call: SecuredCall = { operation: 'DeployAgent', credentials: { apiKey: 'svc_garbage' }, sourceIp: '127.0.0.1', userAgent: 't', traceId: 'x', principal: undefined, resource: '' };
    await security.gate.authenticate(call);
    assert.equal(call.principal?.id, 'anonymous');
    security.gate.authorize(call);
    assert.equal(security.enabled, false);
  } finally {
    security.close();
  }
});
