/**
 * The node-to-node client's channel credentials. A node whose gRPC listener
 * serves TLS (`security.tls_cert_file`) expects its peers to do the same:
 * each channel then speaks TLS 1.3, verifies the called node's certificate
 * against `security.tls_ca_file` (the system's roots without one) and the
 * address it calls, and presents this node's own certificate, which a
 * listener with `require_client_cert` asks for (mutual TLS). The files are
 * read when a channel to a node is first made, so a renewed certificate
 * serves the channels made after it.
 */
import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import { credentials, type ChannelCredentials } from '@grpc/grpc-js';
import type { TlsSettings } from '../security/tls/tls-material.js';

export type ChannelCredentialsSource = () => ChannelCredentials;

export function nodeChannelCredentials(settings: TlsSettings | undefined): ChannelCredentialsSource {
  if (settings === undefined) return () => credentials.createInsecure();
  return () =>
    credentials.createFromSecureContext(
      createSecureContext({
        cert: readFileSync(settings.certFile),
        key: readFileSync(settings.keyFile),
        ...(settings.caFile === '' ? {} : { ca: readFileSync(settings.caFile) }),
        minVersion: 'TLSv1.3',
        ciphers: settings.cipherSuites.join(':'),
      }),
    );
}
