/**
 * Certificates for the TLS tests, made with `openssl` at test time: a CA, a
 * server certificate for 127.0.0.1 whose Authority Information Access names
 * an OCSP responder on loopback, client certificates, a second CA whose
 * certificates must be refused, and a real `openssl ocsp` responder.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Pki {
  readonly dir: string;
  readonly ocspPort: number;
  path(name: string): string;
  read(name: string): Buffer;
  /** A key and a certificate signed by `ca` (`ca` or `rogue-ca`), as `<name>.key` and `<name>.pem`. */
  issue(name: string, subject: string, extensions: string, ca?: string): void;
  /** Runs an `openssl ocsp` responder for `ca`'s index; resolves once it listens. */
  startResponder(): Promise<void>;
  /** A new server certificate and key, renamed over `server.pem` and `server.key` as a renewal does. */
  renewServer(): void;
  remove(): void;
}

function openssl(args: string[], cwd: string): string {
  return execFileSync('openssl', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function makeCa(dir: string, name: string): void {
  openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.pem`, '-days', '2', '-subj', `/CN=${name}`,
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'], dir);
}

export async function createPki(): Promise<Pki> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-pki-'));
  const ocspPort = await freePort();
  const index: string[] = [];
  let responder: ChildProcess | undefined;
  let renewals = 0;
  makeCa(dir, 'ca');
  makeCa(dir, 'rogue-ca');

  function issue(name: string, subject: string, extensions: string, ca = 'ca'): void {
    writeFileSync(join(dir, `${name}.ext`), extensions);
    openssl(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subject], dir);
    openssl(['x509', '-req', '-in', `${name}.csr`, '-CA', `${ca}.pem`, '-CAkey', `${ca}.key`, '-CAcreateserial', '-out', `${name}.pem`, '-days', '2', '-extfile', `${name}.ext`], dir);
    if (ca === 'ca') {
      const certificate = new X509Certificate(readFileSync(join(dir, `${name}.pem`)));
      const expiry = new Date(certificate.validTo).toISOString().replace(/[-:T]/g, '').slice(2, 14);
      index.push(['V', `${expiry}Z`, '', certificate.serialNumber, 'unknown', subject].join('\t'));
      writeFileSync(join(dir, 'index.txt'), `${index.join('\n')}\n`);
    }
  }

  const serverExtensions = `subjectAltName=IP:127.0.0.1,DNS:localhost\nauthorityInfoAccess=OCSP;URI:http://127.0.0.1:${ocspPort}\nextendedKeyUsage=serverAuth\n`;
  issue('server', '/CN=localhost', serverExtensions);
  issue('ocsp', '/CN=ocsp-responder', 'extendedKeyUsage=OCSPSigning\n');

  return {
    dir,
    ocspPort,
    path: (name) => join(dir, name),
    read: (name) => readFileSync(join(dir, name)),
    issue,
    startResponder() {
      const child = spawn('openssl', ['ocsp', '-index', 'index.txt', '-port', String(ocspPort), '-rsigner', 'ocsp.pem', '-rkey', 'ocsp.key', '-CA', 'ca.pem'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
      responder = child;
      return new Promise((resolve, reject) => {
        let said = '';
        const listen = (chunk: Buffer): void => {
          said += chunk.toString();
          if (said.includes('waiting for OCSP client connections')) resolve();
        };
        child.stdout?.on('data', listen);
        child.stderr?.on('data', listen);
        child.once('exit', (code) => reject(new Error(`openssl ocsp exited (${String(code)}): ${said}`)));
      });
    },
    renewServer() {
      renewals += 1;
      issue(`renewed-${renewals}`, '/CN=localhost', serverExtensions);
      // The key first, then the certificate: the material must wait for both, never serve a mismatched pair.
      renameSync(join(dir, `renewed-${renewals}.key`), join(dir, 'server.key'));
      writeFileSync(join(dir, 'server-chain.next'), Buffer.concat([readFileSync(join(dir, `renewed-${renewals}.pem`)), readFileSync(join(dir, 'ca.pem'))]));
      renameSync(join(dir, 'server-chain.next'), join(dir, 'server-chain.pem'));
    },
    remove() {
      if (responder !== undefined && responder.exitCode === null) responder.kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The chain the server serves: its certificate, then the CA (so the OCSP stapler finds the issuer). */
export function writeServerChain(pki: Pki): void {
  writeFileSync(pki.path('server-chain.pem'), Buffer.concat([pki.read('server.pem'), pki.read('ca.pem')]));
}
