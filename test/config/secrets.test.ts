/** Secret settings (src/config/setting.ts `secret`) and the security settings' relations (src/config/security-relations.ts). */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import { configSettingsText, redactedConfig, REDACTED } from '../../src/config/redact.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-secrets-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const SECRET = 'a-secret-of-more-than-thirty-two-bytes!';

function refused(load: () => unknown, key: string, pattern: RegExp): void {
  assert.throws(load, (err: unknown) => err instanceof ConfigError && err.key === key && pattern.test(err.message));
}

test('an inline jwt_secret in the TOML file stops the start, naming the key and the variable to use', () => {
  const file = join(dir, 'inline.toml');
  writeFileSync(file, `[security]\njwt_algorithm = "HS256"\njwt_secret = "${SECRET}"\n`);
  refused(() => loadConfig({ argv: ['--config', file], env: {} }), 'security.jwt_secret', /environment only \(SVC_SECURITY_JWT_SECRET\)/);
});

test('no secret from a flag either; every secret from the environment', () => {
  refused(() => loadConfig({ argv: [`--security.client_secret=${SECRET}`], env: {}, cwd: dir }), 'security.client_secret', /environment only/);
  const config = loadConfig({ env: { SVC_SECURITY_JWT_ALGORITHM: 'HS256', SVC_SECURITY_JWT_SECRET: SECRET, SVC_SECURITY_SALT: 'salt', SVC_SECURITY_CLIENT_SECRET: 'cs' }, cwd: dir });
  assert.equal(config.security.jwt_secret, SECRET);
});

test('secrets are redacted wherever the configuration is shown, and only when set', () => {
  const config = loadConfig({ env: { SVC_SECURITY_JWT_ALGORITHM: 'HS256', SVC_SECURITY_JWT_SECRET: SECRET }, cwd: dir });
  const shown = redactedConfig(config);
  assert.equal(shown.security.jwt_secret, REDACTED);
  assert.equal(shown.security.salt, '');
  assert.ok(!JSON.stringify(shown).includes(SECRET));
  const text = configSettingsText(config);
  assert.equal(text['security.jwt_secret'], REDACTED);
  assert.equal(text['security.grace_period'], '7d');
  assert.ok(!JSON.stringify(text).includes(SECRET));
});

test('settings that only work together are refused apart, naming the key', () => {
  const cases: Array<[Record<string, string>, string, RegExp]> = [
    [{ SVC_SECURITY_JWT_ALGORITHM: 'HS256' }, 'security.jwt_secret', /needs SVC_SECURITY_JWT_SECRET/],
    [{ SVC_SECURITY_JWT_ALGORITHM: 'HS256', SVC_SECURITY_JWT_SECRET: 'short' }, 'security.jwt_secret', /at least 32 bytes/],
    [{ SVC_SECURITY_TLS_CERT_FILE: '/x.pem' }, 'security.tls_key_file', /go together/],
    [{ SVC_SECURITY_TLS_CA_FILE: '/ca.pem' }, 'security.tls_ca_file', /need TLS/],
    [{ SVC_SECURITY_ENABLE_OCSP_STAPLING: 'true' }, 'security.enable_ocsp_stapling', /needs TLS/],
    [{ SVC_SECURITY_TLS_CERT_FILE: '/x.pem', SVC_SECURITY_TLS_KEY_FILE: '/k.pem', SVC_SECURITY_REQUIRE_CLIENT_CERT: 'true' }, 'security.tls_ca_file', /require_client_cert/],
    [{ SVC_SECURITY_CLIENT_ID: 'svc' }, 'security.client_id', /oauth_issuer/],
    [{ SVC_SECURITY_CLIENT_ID: 'svc', SVC_SECURITY_OAUTH_ISSUER: 'https://idp.example' }, 'security.redirect_uri', /redirect_uri/],
    [{ SVC_SECURITY_OAUTH_ISSUER: 'not a url' }, 'security.oauth_issuer', /not a URL/],
    [{ SVC_SECURITY_AUTHORIZATION_ENDPOINT: 'https://idp.example/auth' }, 'security.token_endpoint', /go together/],
    [{ SVC_SECURITY_CIPHER_SUITES: 'TLS_AES_128_GCM_SHA256,ECDHE-RSA-AES128-SHA' }, 'security.cipher_suites', /invalid list/],
    [{ SVC_SECURITY_MIN_TLS_VERSION: '1.2' }, 'security.min_tls_version', /invalid/],
    [{ SVC_SECURITY_AUDIT_EVENTS: 'authentication,logins' }, 'security.audit_events', /invalid/],
  ];
  for (const [env, key, pattern] of cases) refused(() => loadConfig({ env, cwd: dir }), key, pattern);
});
