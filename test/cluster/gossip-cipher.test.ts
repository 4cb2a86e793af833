import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { createEnvelope, decodeClusterSecret, isClusterSecret } from '../../src/cluster/gossip-cipher.js';

const key = randomBytes(32);
const secret = key.toString('base64');
const payload = new TextEncoder().encode('alive b 3');

describe('cluster secret', () => {
  const table: Array<[string, string, boolean]> = [
    ['base64 of 32 bytes', secret, true],
    ['with spaces around', `  ${secret}\n`, true],
    ['base64 of 16 bytes', randomBytes(16).toString('base64'), false],
    ['base64 of 33 bytes', randomBytes(33).toString('base64'), false],
    ['base64url', Buffer.alloc(32, 0xfb).toString('base64url'), false],
    ['not base64', 'correct horse battery staple correct horse!', false],
    ['empty', '', false],
    ['hex of 32 bytes', key.toString('hex'), false],
  ];
  for (const [name, text, ok] of table) {
    it(`${name}: ${ok ? 'accepted' : 'refused'}`, () => {
      assert.equal(isClusterSecret(text), ok);
      if (ok) assert.deepEqual(Buffer.from(decodeClusterSecret(text)!), key);
    });
  }
});

describe('gossip envelope', () => {
  it('seals with AES-256-GCM and opens what it sealed', () => {
    const envelope = createEnvelope(key);
    const sealed = envelope.seal(payload, 'packet');
    assert.equal(sealed.length, payload.length + envelope.overhead);
    assert.equal(sealed[0], 1);
    assert.ok(!Buffer.from(sealed).includes(Buffer.from(payload)), 'the payload does not show');
    assert.deepEqual(Buffer.from(envelope.open(sealed, 'packet')!), Buffer.from(payload));
    assert.notDeepEqual(envelope.seal(payload, 'packet'), sealed, 'a fresh nonce each time');
  });

  it('refuses another key, a flipped bit, the other channel, a truncation and plain text', () => {
    const envelope = createEnvelope(key);
    const sealed = envelope.seal(payload, 'packet');
    assert.equal(createEnvelope(randomBytes(32)).open(sealed, 'packet'), undefined);
    const flipped = Uint8Array.from(sealed);
    flipped[20] = (flipped[20] ?? 0) ^ 1;
    assert.equal(envelope.open(flipped, 'packet'), undefined);
    assert.equal(envelope.open(sealed, 'stream'), undefined);
    assert.equal(envelope.open(sealed.subarray(0, 20), 'packet'), undefined);
    assert.equal(envelope.open(createEnvelope().seal(payload, 'packet'), 'packet'), undefined);
  });

  it('without a key, bytes travel plain, and sealed bytes are refused', () => {
    const plain = createEnvelope();
    const sealed = plain.seal(payload, 'stream');
    assert.equal(sealed[0], 0);
    assert.deepEqual(Buffer.from(plain.open(sealed, 'stream')!), Buffer.from(payload));
    assert.equal(plain.open(createEnvelope(key).seal(payload, 'stream'), 'stream'), undefined);
    assert.equal(plain.open(new Uint8Array([0]), 'stream'), undefined);
  });

  it('refuses a key of the wrong length', () => {
    assert.throws(() => createEnvelope(randomBytes(16)), /32 bytes/);
  });
});
