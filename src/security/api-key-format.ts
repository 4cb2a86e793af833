/**
 * The API key format of DESIGN.md section 9, `svc_<key_id>_<secret>`, and
 * how a secret is kept: the hash (`hash_algorithm`) of salt + secret,
 * compared in constant time.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export const KEY_PREFIX = 'svc';
/** 10 bytes: 16 base32 characters, enough that ids are never guessed or reused. */
const KEY_ID_BYTES = 10;
/** 32 bytes of randomness: the secret cannot be guessed, so one hash round is enough (unlike a password). */
const SECRET_BYTES = 32;
const KEY_ID = /^[a-z2-7]{16}$/;
const SECRET = /^[A-Za-z0-9_-]{43}$/;
const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

export type HashAlgorithm = 'sha256' | 'sha384' | 'sha512';

export interface ParsedKey {
  keyId: string;
  secret: string;
}

function base32(bytes: Uint8Array): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return bits > 0 ? out + BASE32[(value << (5 - bits)) & 31] : out;
}

export function newKeyId(): string {
  return base32(randomBytes(KEY_ID_BYTES));
}

export function newSecret(): string {
  return randomBytes(SECRET_BYTES).toString('base64url');
}

export function formatKey(keyId: string, secret: string): string {
  return `${KEY_PREFIX}_${keyId}_${secret}`;
}

/** Undefined for anything that is not a well-formed key (the secret may itself contain `_`). */
export function parseKey(text: string): ParsedKey | undefined {
  if (!text.startsWith(`${KEY_PREFIX}_`)) return undefined;
  const rest = text.slice(KEY_PREFIX.length + 1);
  const split = rest.indexOf('_');
  if (split === -1) return undefined;
  const keyId = rest.slice(0, split);
  const secret = rest.slice(split + 1);
  return KEY_ID.test(keyId) && SECRET.test(secret) ? { keyId, secret } : undefined;
}

/** Only the key id of a key-shaped text, for blocking by key id even when the secret is malformed. */
export function keyIdOf(text: string): string | undefined {
  const match = /^svc_([a-z2-7]{16})_/.exec(text);
  return match?.[1];
}

export function hashSecret(algorithm: HashAlgorithm, salt: string, secret: string): string {
  return createHash(algorithm).update(salt).update(secret).digest('hex');
}

/** Constant time in the secret: both sides are digests of the same length. */
export function hashesEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}
