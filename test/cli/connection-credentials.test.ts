/**
 * A context's TLS files and credentials reach the server: over gRPC (TLS
 * channel credentials, the key and token as call metadata) and over REST
 * (HTTPS with the client certificate, the same two headers). The servers
 * here are plain grpc-js and node:https servers that require a client
 * certificate signed by a CA made for the test with openssl, and record what
 * each call carried: the client's half of the contract (test/cli/security-commands.test.ts
 * runs the commands against svc's own listeners with authentication on).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadPackageDefinition, Server, ServerCredentials, type ServiceDefinition, type sendUnaryData, type ServerUnaryCall } from '@grpc/grpc-js';
import { runCli } from '../../src/cli/cli.js';
import { EXIT } from '../../src/cli/exit-codes.js';
import { loadManagementProto, MANAGEMENT_SERVICE_NAME } from '../../src/api/proto.js';
import { memoryIo } from './memory-io.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-tls-'));
const file = (name: string): string => join(dir, name);

function openssl(...args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
}

/** An EC CA, and a certificate it signs for `name` (with 127.0.0.1 as its address). */
function makeCertificates(): void {
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  openssl('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '1', '-subj', '/CN=svc test CA');
  for (const name of ['server', 'client']) {
    openssl('req', ...ec, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name === 'server' ? 'localhost' : 'svc-cli'}`);
    writeFileSync(file(`${name}.ext`), name === 'server' ? 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' : 'extendedKeyUsage=clientAuth\n');
    openssl('x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', `${name}.pem`, '-days', '1', '-extfile', `${name}.ext`);
  }
}

interface Seen {
  apiKey?: string;
  authorization?: string;
}

const grpcSeen: Seen[] = [];
const httpSeen: Seen[] = [];
let grpcServer: Server;
let httpsServer: HttpsServer;
let grpcAddress = '';
let httpAddress = '';

function managementService(): ServiceDefinition {
  let node: unknown = loadPackageDefinition(loadManagementProto().packageDefinition);
  for (const part of MANAGEMENT_SERVICE_NAME.split('.')) node = (node as Record<string, unknown>)[part];
  return (node as { service: ServiceDefinition }).service;
}

before(async () => {
  makeCertificates();
  const ca = readFileSync(file('ca.pem'));
  const cert = readFileSync(file('server.pem'));
  const key = readFileSync(file('server.key'));
  grpcServer = new Server();
  grpcServer.addService(managementService(), {
    Health(call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) {
      grpcSeen.push({ apiKey: call.metadata.get('x-api-key')[0]?.toString(), authorization: call.metadata.get('authorization')[0]?.toString() });
      callback(null, { status: 'healthy', version: 'tls-test', agents: { running: 0, capacity: 1 }, trace_id: 't' });
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    grpcServer.bindAsync('127.0.0.1:0', ServerCredentials.createSsl(ca, [{ cert_chain: cert, private_key: key }], true), (error, bound) => (error ? reject(error) : resolve(bound))),
  );
  grpcAddress = `127.0.0.1:${port}`;
  httpsServer = createServer({ ca, cert, key, requestCert: true, rejectUnauthorized: true }, (req, res) => {
    httpSeen.push({ apiKey: req.headers['x-api-key'] as string | undefined, authorization: req.headers.authorization });
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ messages: [{ message_id: 'm1', sender: 'client:cli', receiver: 'a1', message_type: 'request', content: 'over tls', conversation_id: 'c', reply_with: '', in_reply_to: '', language: '', ontology: '', protocol: '', metadata: {}, created_at: '2026-01-01T00:00:00.000Z' }] }));
  });
  await new Promise<void>((resolve) => httpsServer.listen(0, '127.0.0.1', resolve));
  httpAddress = `127.0.0.1:${(httpsServer.address() as AddressInfo).port}`;
});

after(async () => {
  grpcServer.forceShutdown();
  await new Promise((resolve) => httpsServer.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

async function svc(home: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const io = memoryIo({ home, cwd: dir });
  const code = await runCli(args, io);
  return { code, stdout: io.stdout, stderr: io.stderr };
}

describe('a context with TLS files and credentials', () => {
  it('reaches a mutual-TLS gRPC server with the API key and token as metadata', async () => {
    const home = mkdtempSync(join(dir, 'home-'));
    const set = await svc(home, 'context', 'set', 'secure', '-s', grpcAddress, '--http-server', httpAddress, '--tls-ca', 'ca.pem', '--tls-cert', 'client.pem', '--tls-key', 'client.key', '--api-key', 'svc_k1_s3cret', '--token', 'eyJ.t.s', '--use');
    assert.equal(set.code, EXIT.ok, set.stderr);
    const health = await svc(home, 'health');
    assert.equal(health.code, EXIT.ok, health.stderr);
    assert.match(health.stdout, /^healthy {2}version tls-test/);
    assert.deepEqual(grpcSeen.at(-1), { apiKey: 'svc_k1_s3cret', authorization: 'Bearer eyJ.t.s' });

    const history = await svc(home, 'messages', 'history', 'a1');
    assert.equal(history.code, EXIT.ok, history.stderr);
    assert.equal(history.stdout, '2026-01-01T00:00:00.000Z  client:cli -> a1  request  "over tls"\n');
    assert.deepEqual(httpSeen.at(-1), { apiKey: 'svc_k1_s3cret', authorization: 'Bearer eyJ.t.s' });
  });

  it('without the client certificate the servers refuse: exit 6, one line naming the address', async () => {
    const home = mkdtempSync(join(dir, 'home-'));
    await svc(home, 'context', 'set', 'no-cert', '-s', grpcAddress, '--http-server', httpAddress, '--tls-ca', 'ca.pem', '--use');
    const calls = grpcSeen.length;
    const health = await svc(home, 'health');
    assert.equal(health.code, EXIT.unavailable, health.stderr);
    assert.match(health.stderr, new RegExp(`^svc: UNAVAILABLE: no connection to the server at ${grpcAddress}`));
    const history = await svc(home, 'messages', 'history', 'a1');
    assert.equal(history.code, EXIT.unavailable, history.stderr);
    assert.match(history.stderr, new RegExp(`^svc: UNAVAILABLE: no connection to the server at ${httpAddress}`));
    assert.equal(grpcSeen.length, calls);
  });

  it('plaintext to a TLS server fails the same way, and no credential is sent', async () => {
    const home = mkdtempSync(join(dir, 'home-'));
    const before = httpSeen.length;
    const history = await svc(home, 'messages', 'history', 'a1', '--http-server', httpAddress);
    assert.equal(history.code, EXIT.unavailable, history.stderr);
    assert.equal(httpSeen.length, before);
  });
});
