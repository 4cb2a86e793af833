import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodePageToken, encodePageToken } from '../../src/store/page-token.js';
import { isStoreError } from '../../src/store/store-error.js';

const b64 = (text: string): string => Buffer.from(text).toString('base64url');

describe('page tokens', () => {
  for (const key of [
    { createdAt: 0, agentId: 'a' },
    { createdAt: 1_700_000_000_123, agentId: 'agent-00042' },
    { createdAt: 5, agentId: 'ünïcode/with "quotes" and =+' },
  ]) {
    it(`round-trips ${JSON.stringify(key)}`, () => {
      const token = encodePageToken(key);
      assert.match(token, /^[A-Za-z0-9_-]+$/);
      assert.deepEqual(decodePageToken(token), key);
    });
  }

  const invalid: Array<[string, string]> = [
    ['empty', ''],
    ['outside the alphabet', '!!!!'],
    ['padded base64', `${b64('[1,"a"]')}==`],
    ['standard base64 characters', '+/+/'],
    ['not JSON', b64('hello')],
    ['an object', b64('{"createdAt":1,"agentId":"a"}')],
    ['one element', b64('[1]')],
    ['three elements', b64('[1,"a",2]')],
    ['fractional time', b64('[1.5,"a"]')],
    ['time as a string', b64('["1","a"]')],
    ['empty agent id', b64('[1,""]')],
    ['numeric agent id', b64('[1,2]')],
    ['too long', 'A'.repeat(2048)],
  ];
  for (const [why, token] of invalid) {
    it(`refuses a token that is ${why}`, () => {
      assert.throws(() => decodePageToken(token), (err) => isStoreError(err, 'invalid_page_token'));
    });
  }
});
