/**
 * gRPC over TLS with the certificate of `TlsMaterial`: grpc-js credentials
 * whose secure context follows the material's reloads (grpc-js calls
 * `setSecureContext` on its listener for each update). grpc-js's own
 * `createSsl` takes fixed buffers and its certificate-provider credentials
 * offer no way to set the TLS version or suites, so this subclasses its
 * `ServerCredentials` the way those do.
 */
import { ServerCredentials } from '@grpc/grpc-js';
import type { TlsMaterial } from './tls-material.js';

class ReloadingTlsCredentials extends ServerCredentials {
  constructor(material: TlsMaterial) {
    const { requestCert, rejectUnauthorized, minVersion, ciphers } = material.serverOptions();
    super({ requestCert, rejectUnauthorized, minVersion, ciphers }, material.contextOptions());
    material.onReload(() => this.updateSecureContextOptions(material.contextOptions()));
  }

  _equals(other: ServerCredentials): boolean {
    return other === this;
  }
}

export function grpcTlsCredentials(material: TlsMaterial): ServerCredentials {
  return new ReloadingTlsCredentials(material);
}
