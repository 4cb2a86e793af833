/**
 * The envelope of every gossip packet and stream frame: one version byte,
 * then either the plain bytes (0) or AES-256-GCM under the cluster secret (1):
 * a random 12-byte nonce, the ciphertext and the 16-byte tag. The additional
 * data binds the bytes to their channel, so a packet cannot be replayed as a
 * stream frame or the reverse.
 *
 * A node with a secret opens only sealed bytes under its key; a node without
 * one opens only plain bytes. Anything else is refused (`undefined`), and the
 * caller drops and counts it.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

export const CLUSTER_SECRET_BYTES = 32;
const PLAIN = 0;
const AES_256_GCM = 1;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

export type Channel = 'packet' | 'stream';
const AAD: Record<Channel, Buffer> = { packet: Buffer.from('svc gossip packet v1'), stream: Buffer.from('svc gossip stream v1') };

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** The key of a `cluster.secret` (base64 of exactly 32 bytes), or `undefined` when the text is not one. */
export function decodeClusterSecret(text: string): Uint8Array | undefined {
  const trimmed = text.trim();
  if (!BASE64.test(trimmed) || trimmed.length % 4 !== 0) return undefined;
  const key = Buffer.from(trimmed, 'base64');
  return key.length === CLUSTER_SECRET_BYTES ? new Uint8Array(key) : undefined;
}

export function isClusterSecret(text: string): boolean {
  return decodeClusterSecret(text) !== undefined;
}

export interface Envelope {
  readonly encrypted: boolean;
  /** Bytes the envelope adds to a payload. */
  readonly overhead: number;
  seal(plain: Uint8Array, channel: Channel): Uint8Array;
  /** The payload, or `undefined` when the bytes are not authentic under this node's key (or lack of one). */
  open(bytes: Uint8Array, channel: Channel): Uint8Array | undefined;
}

function plainEnvelope(): Envelope {
  return {
    encrypted: false,
    overhead: 1,
    seal(plain) {
      const out = new Uint8Array(plain.length + 1);
      out[0] = PLAIN;
      out.set(plain, 1);
      return out;
    },
    open: (bytes) => (bytes.length > 1 && bytes[0] === PLAIN ? bytes.subarray(1) : undefined),
  };
}

function gcmEnvelope(key: Uint8Array): Envelope {
  if (key.length !== CLUSTER_SECRET_BYTES) throw new RangeError(`the cluster key must be ${CLUSTER_SECRET_BYTES} bytes, not ${key.length}`);
  const secret = Buffer.from(key);
  return {
    encrypted: true,
    overhead: 1 + NONCE_BYTES + TAG_BYTES,
    seal(plain, channel) {
      const nonce = randomBytes(NONCE_BYTES);
      const cipher = createCipheriv('aes-256-gcm', secret, nonce);
      cipher.setAAD(AAD[channel]);
      const body = Buffer.concat([cipher.update(plain), cipher.final()]);
      return Buffer.concat([Buffer.of(AES_256_GCM), nonce, body, cipher.getAuthTag()]);
    },
    open(bytes, channel) {
      if (bytes.length <= 1 + NONCE_BYTES + TAG_BYTES || bytes[0] !== AES_256_GCM) return undefined;
      const nonce = bytes.subarray(1, 1 + NONCE_BYTES);
      const body = bytes.subarray(1 + NONCE_BYTES, bytes.length - TAG_BYTES);
      const decipher = createDecipheriv('aes-256-gcm', secret, nonce);
      decipher.setAAD(AAD[channel]);
      decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
      try {
        return Buffer.concat([decipher.update(body), decipher.final()]);
      } catch {
        return undefined;
      }
    },
  };
}

/** AES-256-GCM under `key` when one is given, plain otherwise. */
export function createEnvelope(key?: Uint8Array): Envelope {
  return key === undefined ? plainEnvelope() : gcmEnvelope(key);
}
