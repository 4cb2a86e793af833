/**
 * Security settings that only make sense together (DESIGN.md section 9).
 * A combination that would leave the server less safe than asked, or
 * unable to honour a setting, stops the start naming the key.
 */
import type { Config } from './schema.js';

/** HS256 keys shorter than the hash output are refused (RFC 7518 section 3.2). */
export const MIN_HS256_SECRET_BYTES = 32;

export interface RelationError {
  key: string;
  message: string;
}

export function securityRelationError(config: Config): RelationError | undefined {
  const s = config.security;
  if (s.jwt_algorithm === 'HS256') {
    if (s.jwt_secret === '') return { key: 'security.jwt_secret', message: 'jwt_algorithm HS256 needs SVC_SECURITY_JWT_SECRET' };
    if (Buffer.byteLength(s.jwt_secret) < MIN_HS256_SECRET_BYTES) {
      return { key: 'security.jwt_secret', message: `an HS256 secret must be at least ${MIN_HS256_SECRET_BYTES} bytes` };
    }
  }
  if ((s.tls_cert_file === '') !== (s.tls_key_file === '')) {
    return { key: s.tls_cert_file === '' ? 'security.tls_cert_file' : 'security.tls_key_file', message: 'tls_cert_file and tls_key_file go together' };
  }
  const tls = s.tls_cert_file !== '';
  if (!tls) {
    if (s.tls_ca_file !== '') return { key: 'security.tls_ca_file', message: 'client certificates need TLS: set tls_cert_file and tls_key_file' };
    if (s.require_client_cert) return { key: 'security.require_client_cert', message: 'client certificates need TLS: set tls_cert_file and tls_key_file' };
    if (s.enable_ocsp_stapling) return { key: 'security.enable_ocsp_stapling', message: 'OCSP stapling needs TLS: set tls_cert_file and tls_key_file' };
  }
  if (s.require_client_cert && s.tls_ca_file === '') return { key: 'security.tls_ca_file', message: 'require_client_cert needs the CA to ask client certificates of' };
  if ((s.authorization_endpoint === '') !== (s.token_endpoint === '')) {
    return { key: s.token_endpoint === '' ? 'security.token_endpoint' : 'security.authorization_endpoint', message: 'authorization_endpoint and token_endpoint go together' };
  }
  const issuerKnown = s.oauth_issuer !== '' || s.authorization_endpoint !== '';
  if (s.client_id !== '' && !issuerKnown) return { key: 'security.client_id', message: 'browser login needs oauth_issuer (or authorization_endpoint and token_endpoint)' };
  if (s.client_id !== '' && s.redirect_uri === '') return { key: 'security.redirect_uri', message: 'browser login needs the redirect_uri registered at the issuer' };
  for (const key of ['oauth_issuer', 'authorization_endpoint', 'token_endpoint', 'userinfo_endpoint', 'redirect_uri'] as const) {
    if (s[key] !== '' && !URL.canParse(s[key])) return { key: `security.${key}`, message: `not a URL: ${s[key]}` };
  }
  return undefined;
}
