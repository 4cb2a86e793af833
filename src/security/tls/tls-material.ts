/**
 * The TLS certificate, key and client CA of both API listeners (DESIGN.md
 * section 9), read from `tls_cert_file`, `tls_key_file` and `tls_ca_file`
 * and read again when one of them changes, so a renewed certificate is
 * served without a restart (new connections get it; open ones keep theirs).
 * A half-written or mismatched pair is refused: the listeners keep the
 * previous one and the log says why. TLS 1.3 only, with the configured
 * suites.
 */
import { X509Certificate, createHash } from 'node:crypto';
import { readFileSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import { createSecureContext, type SecureContextOptions, type TlsOptions } from 'node:tls';
import type { Clock, TimerHandle } from '../../../supervisors/index.js';
import { ConfigError } from '../../config/load.js';
import type { Config } from '../../config/schema.js';
import type { Logger } from '../../telemetry/logger.js';

/** Files are often replaced in steps (key, then certificate): reload once they are quiet this long. */
export const RELOAD_QUIET_MS = 100;

export interface TlsSettings {
  certFile: string;
  keyFile: string;
  /** Empty: client certificates are not asked for. */
  caFile: string;
  cipherSuites: readonly string[];
  requireClientCert: boolean;
  verifyClientCert: boolean;
}

export interface TlsMaterial {
  /** For the listener's constructor: the handshake rules and the current context. */
  serverOptions(): TlsOptions;
  /** The current certificate, key and CA with the protocol rules, for `setSecureContext`. */
  contextOptions(): SecureContextOptions;
  /** The served leaf certificate and, when the files hold it, its issuer (OCSP needs both). */
  chain(): { leaf: X509Certificate; issuer: X509Certificate | undefined };
  /** sha256 of the served certificate file's content. */
  readonly fingerprint: string;
  /** Called after each successful reload; answers the unsubscribe. */
  onReload(listener: () => void): () => void;
  close(): void;
}

export function tlsSettingsFrom(security: Config['security']): TlsSettings | undefined {
  if (security.tls_cert_file === '') return undefined;
  return {
    certFile: security.tls_cert_file,
    keyFile: security.tls_key_file,
    caFile: security.tls_ca_file,
    cipherSuites: security.cipher_suites,
    requireClientCert: security.require_client_cert,
    verifyClientCert: security.verify_client_cert,
  };
}

interface Loaded {
  cert: Buffer;
  key: Buffer;
  ca: Buffer | undefined;
  fingerprint: string;
  leaf: X509Certificate;
  issuer: X509Certificate | undefined;
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g;

function certificates(pem: Buffer | undefined): X509Certificate[] {
  return pem === undefined ? [] : (pem.toString('utf8').match(PEM_CERTIFICATE) ?? []).map((block) => new X509Certificate(block));
}

export function createTlsMaterial(settings: TlsSettings, options: { clock: Clock; log?: Logger }): TlsMaterial {
  const { clock, log } = options;
  const protocol = { minVersion: 'TLSv1.3', ciphers: settings.cipherSuites.join(':') } as const;
  const askForCertificates = settings.caFile !== '';

  function read(): Loaded {
    const cert = readFileSync(settings.certFile);
    const key = readFileSync(settings.keyFile);
    const ca = settings.caFile === '' ? undefined : readFileSync(settings.caFile);
    // Throws for a key that does not match the certificate, or anything unreadable.
    createSecureContext({ cert, key, ...(ca === undefined ? {} : { ca }), ...protocol });
    const [leaf, ...chain] = certificates(cert);
    if (leaf === undefined) throw new Error(`${settings.certFile} holds no PEM certificate`);
    const issuer = [...chain, ...certificates(ca)].find((candidate) => leaf.checkIssued(candidate));
    return { cert, key, ca, fingerprint: createHash('sha256').update(cert).digest('hex'), leaf, issuer };
  }

  let current: Loaded;
  try {
    current = read();
  } catch (err) {
    throw new ConfigError('security.tls_cert_file', `cannot use the TLS files: ${err instanceof Error ? err.message : String(err)}`);
  }
  const listeners = new Set<() => void>();
  let timer: TimerHandle | undefined;

  function reload(): void {
    timer = undefined;
    let next: Loaded;
    try {
      next = read();
    } catch (err) {
      log?.warn({ err: err instanceof Error ? err.message : String(err) }, 'the TLS files changed but do not load; the previous certificate stays in use');
      return;
    }
    const same = next.fingerprint === current.fingerprint && next.key.equals(current.key) && (next.ca ?? Buffer.alloc(0)).equals(current.ca ?? Buffer.alloc(0));
    if (same) return;
    current = next;
    log?.info({ subject: next.leaf.subject, valid_to: next.leaf.validTo, fingerprint: next.fingerprint }, 'TLS certificate reloaded');
    for (const listener of listeners) listener();
  }

  const files = [settings.certFile, settings.keyFile, settings.caFile].filter((file) => file !== '');
  const byDirectory = new Map<string, Set<string>>();
  for (const file of files) {
    const names = byDirectory.get(dirname(file)) ?? new Set<string>();
    names.add(basename(file));
    byDirectory.set(dirname(file), names);
  }
  // The directory, not the file: a renewal usually writes a new file and renames it over the old one.
  const watchers: FSWatcher[] = [...byDirectory].map(([directory, names]) =>
    watch(directory, (_event, name) => {
      if (name !== null && !names.has(name.toString())) return;
      if (timer !== undefined) clock.clearTimeout(timer);
      timer = clock.setTimeout(reload, RELOAD_QUIET_MS);
    }),
  );

  function contextOptions(): SecureContextOptions {
    return { cert: current.cert, key: current.key, ...(current.ca === undefined ? {} : { ca: current.ca }), ...protocol };
  }

  return {
    contextOptions,
    serverOptions() {
      return {
        ...contextOptions(),
        requestCert: askForCertificates,
        // With verification the handshake itself refuses a missing (when required) or unverifiable certificate.
        rejectUnauthorized: askForCertificates && settings.verifyClientCert && settings.requireClientCert,
      };
    },
    chain: () => ({ leaf: current.leaf, issuer: current.issuer }),
    get fingerprint() {
      return current.fingerprint;
    },
    onReload(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close() {
      if (timer !== undefined) clock.clearTimeout(timer);
      for (const watcher of watchers) watcher.close();
      listeners.clear();
    },
  };
}
