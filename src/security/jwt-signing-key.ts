/**
 * The key the server signs its own tokens with (`jwt_algorithm`): the
 * operator's `jwt_private_key_file`, the HS256 secret from the environment,
 * or a key pair generated into the data directory on first start and kept.
 * A key that does not fit the algorithm stops the start naming the setting.
 */
import { createPrivateKey, createPublicKey, createSecretKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { calculateJwkThumbprint, exportJWK } from 'jose';
import { ConfigError } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { dataDirSecret } from './data-dir-secret.js';

export type JwtAlgorithm = Config['security']['jwt_algorithm'];

export interface SigningKey {
  readonly algorithm: JwtAlgorithm;
  readonly signWith: KeyObject;
  readonly verifyWith: KeyObject;
  /** The JWK thumbprint of the verification key, sent as `kid`. */
  readonly kid: string;
}

/** RSA keys shorter than this are refused (NIST SP 800-131A). */
const MIN_RSA_BITS = 2048;

function generatedPem(algorithm: Exclude<JwtAlgorithm, 'HS256'>): string {
  const key =
    algorithm === 'RS256'
      ? generateKeyPairSync('rsa', { modulusLength: MIN_RSA_BITS }).privateKey
      : algorithm === 'ES256'
        ? generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey
        : generateKeyPairSync('ed25519').privateKey;
  return key.export({ type: 'pkcs8', format: 'pem' }).toString();
}

/** Why `key` cannot sign `algorithm`, or undefined when it can. */
export function keyMismatch(algorithm: Exclude<JwtAlgorithm, 'HS256'>, key: KeyObject): string | undefined {
  const type = key.asymmetricKeyType;
  const details = key.asymmetricKeyDetails;
  switch (algorithm) {
    case 'RS256':
      if (type !== 'rsa') return `RS256 needs an RSA key, not ${String(type)}`;
      return (details?.modulusLength ?? 0) < MIN_RSA_BITS ? `an RSA key must have at least ${MIN_RSA_BITS} bits` : undefined;
    case 'ES256':
      return type === 'ec' && details?.namedCurve === 'prime256v1' ? undefined : 'ES256 needs an EC key on P-256';
    case 'EdDSA':
      return type === 'ed25519' ? undefined : 'EdDSA needs an Ed25519 key';
  }
}

export async function loadSigningKey(security: Config['security'], dataDir: string): Promise<SigningKey> {
  const algorithm = security.jwt_algorithm;
  if (algorithm === 'HS256') {
    const secret = createSecretKey(Buffer.from(security.jwt_secret, 'utf8'));
    return { algorithm, signWith: secret, verifyWith: secret, kid: 'hs256' };
  }
  let signWith: KeyObject;
  if (security.jwt_private_key_file !== '') {
    try {
      signWith = createPrivateKey(readFileSync(security.jwt_private_key_file));
    } catch (err) {
      throw new ConfigError('security.jwt_private_key_file', `cannot read a PEM private key: ${err instanceof Error ? err.message : String(err)}`);
    }
    const mismatch = keyMismatch(algorithm, signWith);
    if (mismatch !== undefined) throw new ConfigError('security.jwt_private_key_file', mismatch);
  } else {
    signWith = createPrivateKey(dataDirSecret(dataDir, `jwt-${algorithm.toLowerCase()}.pem`, () => generatedPem(algorithm)));
    const mismatch = keyMismatch(algorithm, signWith);
    if (mismatch !== undefined) throw new ConfigError('security.jwt_algorithm', `the generated key in the data directory does not fit: ${mismatch}`);
  }
  const verifyWith = createPublicKey(signWith);
  return { algorithm, signWith, verifyWith, kid: await calculateJwkThumbprint(await exportJWK(verifyWith)) };
}
