import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, renameSync, writeFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { createRealClock } from '../../supervisors/clock.js';
import { ConfigError } from '../../src/config/load.js';
import { createTlsMaterial, type TlsSettings } from '../../src/security/tls/tls-material.js';
import { createLogger } from '../../src/telemetry/logger.js';
import { createPki, type Pki } from './test-pki.js';

let pki: Pki;
before(async () => {
  pki = await createPki();
  pki.issue('other', '/CN=localhost', 'subjectAltName=IP:127.0.0.1\n');
});
after(() => pki.remove());

const SUITES = ['TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256', 'TLS_AES_128_GCM_SHA256'];

function settings(over: Partial<TlsSettings> = {}): TlsSettings {
  return { certFile: pki.path('live.pem'), keyFile: pki.path('live.key'), caFile: pki.path('ca.pem'), cipherSuites: SUITES, requireClientCert: true, verifyClientCert: true, ...over };
}

/** A logger whose lines can be waited for. */
function watchedLog() {
  let text = '';
  const waiters: Array<{ pattern: RegExp; resolve: () => void }> = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString();
      for (const waiter of waiters.filter((w) => w.pattern.test(text))) waiter.resolve();
      done();
    },
  });
  return {
    log: createLogger({ level: 'info', enabled: true, stream }),
    said: (pattern: RegExp) => new Promise<void>((resolve) => (pattern.test(text) ? resolve() : waiters.push({ pattern, resolve }))),
  };
}

test('TLS 1.3 only, the configured suites, client certificates asked for with a CA and required as configured', () => {
  copyFileSync(pki.path('server.pem'), pki.path('live.pem'));
  copyFileSync(pki.path('server.key'), pki.path('live.key'));
  const material = createTlsMaterial(settings(), { clock: createRealClock() });
  const options = material.serverOptions();
  assert.deepEqual([options.minVersion, options.ciphers, options.requestCert, options.rejectUnauthorized], ['TLSv1.3', SUITES.join(':'), true, true]);
  assert.equal(material.chain().issuer?.subject, 'CN=ca', 'the issuer is found in tls_ca_file');
  material.close();
  const optional = createTlsMaterial(settings({ requireClientCert: false }), { clock: createRealClock() });
  assert.deepEqual([optional.serverOptions().requestCert, optional.serverOptions().rejectUnauthorized], [true, false]);
  optional.close();
  const none = createTlsMaterial(settings({ caFile: '', requireClientCert: false }), { clock: createRealClock() });
  assert.equal(none.serverOptions().requestCert, false);
  none.close();
});

test('files that do not load stop the start, naming tls_cert_file', () => {
  writeFileSync(pki.path('broken.pem'), 'not a certificate');
  for (const over of [{ certFile: pki.path('broken.pem') }, { keyFile: pki.path('other.key') }, { certFile: pki.path('missing.pem') }]) {
    assert.throws(() => createTlsMaterial(settings(over), { clock: createRealClock() }), (err: unknown) => err instanceof ConfigError && err.key === 'security.tls_cert_file');
  }
});

test('a change that does not load keeps the certificate in use; the next good pair is taken', async () => {
  copyFileSync(pki.path('server.pem'), pki.path('live.pem'));
  copyFileSync(pki.path('server.key'), pki.path('live.key'));
  const { log, said } = watchedLog();
  const material = createTlsMaterial(settings(), { clock: createRealClock(), log });
  const served = material.fingerprint;
  let reloads = 0;
  material.onReload(() => void reloads++);
  writeFileSync(pki.path('live.next'), pki.read('other.pem'));
  renameSync(pki.path('live.next'), pki.path('live.pem'));
  await said(/do not load; the previous certificate stays in use/);
  assert.deepEqual([material.fingerprint, reloads], [served, 0], 'a certificate without its key is not served');
  const reloaded = new Promise<void>((resolve) => material.onReload(resolve));
  copyFileSync(pki.path('other.key'), pki.path('live.key'));
  await reloaded;
  assert.notEqual(material.fingerprint, served);
  material.close();
});
