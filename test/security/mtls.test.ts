/**
 * Mutual TLS end to end on both listeners, with certificates made by openssl
 * at test time: TLS 1.3 only, a client certificate required and verified
 * (`cert:<CN>`, its roles from the policy file), OCSP stapling from a real
 * `openssl ocsp` responder on loopback, and a certificate swapped while the
 * server runs.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash, X509Certificate } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { connect, type PeerCertificate } from 'node:tls';
import { credentials } from '@grpc/grpc-js';
import { DEFAULT_POLICY } from '../../src/security/rbac-policy.js';
import { ADMIN_KEY, grpcRefusal, startSecuredServer, type SecuredServer } from './secured-server.js';
import { createPki, writeServerChain, type Pki } from './test-pki.js';

let pki: Pki;
let s: SecuredServer;
let port: number;

before(async () => {
  pki = await createPki();
  pki.issue('gateway', '/CN=gateway', 'extendedKeyUsage=clientAuth\n');
  pki.issue('intruder', '/CN=gateway', 'extendedKeyUsage=clientAuth\n', 'rogue-ca');
  writeServerChain(pki);
  writeFileSync(pki.path('policy.csv'), `${DEFAULT_POLICY}g, cert:gateway, operator\n`);
  await pki.startResponder();
  s = await startSecuredServer({
    tls: true,
    env: {
      SVC_SECURITY_TLS_CERT_FILE: pki.path('server-chain.pem'),
      SVC_SECURITY_TLS_KEY_FILE: pki.path('server.key'),
      SVC_SECURITY_TLS_CA_FILE: pki.path('ca.pem'),
      SVC_SECURITY_REQUIRE_CLIENT_CERT: 'true',
      SVC_SECURITY_ENABLE_OCSP_STAPLING: 'true',
      SVC_SECURITY_POLICY_FILE: pki.path('policy.csv'),
    },
  });
  port = Number(s.listeners.addresses.http.split(':').pop());
});
after(async () => {
  await s.stop();
  pki.remove();
});

interface Identity {
  cert?: Buffer;
  key?: Buffer;
}
const gateway = (): Identity => ({ cert: pki.read('gateway.pem'), key: pki.read('gateway.key') });
const intruder = (): Identity => ({ cert: pki.read('intruder.pem'), key: pki.read('intruder.key') });

function https(method: string, path: string, identity: Identity, headers: Record<string, string> = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, ca: pki.read('ca.pem'), ...identity, headers, agent: false }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown> }));
    });
    req.on('error', reject);
    req.end();
  });
}

function grpcWith(identity: Identity, presented: { apiKey?: string } = {}) {
  return s.grpc(presented, credentials.createSsl(pki.read('ca.pem'), identity.key ?? null, identity.cert ?? null));
}

/** A bare TLS handshake; resolves with what the server showed, or the error it refused with. */
function handshake(options: Identity & { maxVersion?: 'TLSv1.2' | 'TLSv1.3'; requestOCSP?: boolean }): Promise<{ protocol: string | null; cipher: string; certificate: PeerCertificate; ocsp: Buffer | undefined } | Error> {
  return new Promise((resolve) => {
    let ocsp: Buffer | undefined;
    const socket = connect({ host: '127.0.0.1', port, ca: pki.read('ca.pem'), servername: 'localhost', ...options });
    socket.once('OCSPResponse', (response: Buffer) => (ocsp = response));
    socket.once('secureConnect', () => {
      // TLS 1.3 refuses a client certificate after the handshake: one read tells whether the server kept the connection.
      socket.write('GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
    });
    socket.once('data', () => {
      resolve({ protocol: socket.getProtocol(), cipher: socket.getCipher().standardName, certificate: socket.getPeerCertificate(), ocsp });
      socket.destroy();
    });
    socket.once('error', (err) => resolve(err));
    // A refused TLS 1.3 client certificate may end the connection without an alert the client reads as an error.
    socket.once('close', () => resolve(new Error('the server closed the connection')));
  });
}

test('a certificate of the CA authenticates cert:<CN> on both doors, with the roles the policy gives it', async () => {
  assert.equal((await https('GET', '/api/v1/agents', gateway())).status, 200);
  const denied = await https('POST', '/api/v1/keys', gateway());
  assert.deepEqual([denied.status, (denied.body.metadata as Record<string, string>).permission], [403, 'system:configure']);
  const client = grpcWith(gateway());
  assert.deepEqual((await client.list()).agents, []);
  assert.deepEqual(await grpcRefusal(client.listKeys()), { code: 'PERMISSION_DENIED', metadata: { permission: 'system:configure' } });
  // An API key on the same connection is the credential that counts.
  assert.equal((await grpcWith(gateway(), { apiKey: ADMIN_KEY }).listKeys()).keys.length, 1);
  const audit = (await https('GET', '/api/v1/audit?event=authorization', gateway(), { 'x-api-key': ADMIN_KEY })).body.records as Array<{ principal: string }>;
  assert.ok(audit.some((r) => r.principal === 'cert:gateway'), JSON.stringify(audit));
});

test('TLS 1.3 with the configured suites; no certificate, another CA\'s certificate and a TLS 1.2 client are refused', async () => {
  const good = await handshake(gateway());
  assert.ok(!(good instanceof Error), String(good));
  assert.equal(good.protocol, 'TLSv1.3');
  assert.ok(['TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256', 'TLS_AES_128_GCM_SHA256'].includes(good.cipher), good.cipher);
  for (const [name, attempt] of [
    ['no certificate', handshake({})],
    ['a certificate of another CA', handshake(intruder())],
    ['TLS 1.2', handshake({ ...gateway(), maxVersion: 'TLSv1.2' })],
  ] as const) {
    assert.ok((await attempt) instanceof Error, `${name} is refused`);
  }
  await assert.rejects(https('GET', '/api/v1/health', {}), 'HTTPS without a certificate');
  for (const identity of [{}, intruder()]) assert.equal((await grpcRefusal(grpcWith(identity).health())).code, 'UNAVAILABLE', 'gRPC without a good certificate never connects');
});

test('the HTTPS listener staples the responder\'s answer: openssl verifies it and reads the certificate as good', async () => {
  const stapler = s.listeners.ocsp;
  assert.ok(stapler !== undefined);
  if (stapler.response() === undefined) await new Promise<void>((resolve) => stapler.onResponse(resolve));
  const shake = await handshake({ ...gateway(), requestOCSP: true });
  assert.ok(!(shake instanceof Error) && shake.ocsp !== undefined && shake.ocsp.length > 0, 'a response was stapled');
  writeFileSync(pki.path('stapled.der'), shake.ocsp);
  const verdict = execFileSync('openssl', ['ocsp', '-respin', 'stapled.der', '-issuer', 'ca.pem', '-cert', 'server.pem', '-CAfile', 'ca.pem'], { cwd: pki.dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  assert.match(verdict, /server\.pem: good/);
});

/** The certificate a listener presents (the gRPC one speaks HTTP/2 only, hence ALPN). */
function presented(listenerPort: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: listenerPort, ca: pki.read('ca.pem'), servername: 'localhost', ALPNProtocols: ['h2'], ...gateway() }, () => {
      resolve(socket.getPeerCertificate().fingerprint256);
      socket.destroy();
    });
    socket.once('error', reject);
  });
}

test('a certificate swapped on disk while the server runs is served to new connections on both doors', async () => {
  const material = s.listeners.tls;
  assert.ok(material !== undefined);
  const grpcPort = Number(s.grpcAddress.split(':').pop());
  const before = await handshake(gateway());
  assert.ok(!(before instanceof Error));
  assert.equal(await presented(grpcPort), before.certificate.fingerprint256);
  const reloaded = new Promise<void>((resolve) => material.onReload(resolve));
  pki.renewServer();
  await reloaded;
  const renewed = new X509Certificate(`${pki.read('server-chain.pem').toString().split('-----END CERTIFICATE-----')[0] ?? ''}-----END CERTIFICATE-----\n`);
  const after = await handshake(gateway());
  assert.ok(!(after instanceof Error));
  assert.notEqual(after.certificate.fingerprint256, before.certificate.fingerprint256);
  assert.equal(after.certificate.fingerprint256, renewed.fingerprint256);
  assert.equal(await presented(grpcPort), renewed.fingerprint256, 'the gRPC listener too');
  assert.equal(material.fingerprint, createHash('sha256').update(pki.read('server-chain.pem')).digest('hex'));
  assert.equal((await https('GET', '/api/v1/agents', gateway())).status, 200);
  assert.deepEqual((await grpcWith(gateway()).list()).agents, [], 'gRPC over a new connection with the new certificate');
  assert.match(s.log(), /"msg":"TLS certificate reloaded"/);
});
