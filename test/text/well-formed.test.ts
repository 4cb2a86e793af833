import { test } from 'node:test';
import assert from 'node:assert/strict';
import { illFormed, isWellFormed, truncate } from '../../src/text/well-formed.js';

const TEXTS: Array<[string, string, boolean]> = [
  ['empty', '', true],
  ['ASCII', 'agent-1', true],
  ['a surrogate pair (emoji)', 'a😀b', true],
  ['a pair at the end', 'ab😀', true],
  ['a lone high surrogate', 'a\ud800b', false],
  ['a lone low surrogate', 'a\udc00b', false],
  ['a reversed pair', '\udc00\ud800', false],
  ['a lone high surrogate at the end', 'abc\ud83d', false],
  ['a lone low surrogate at the start', '\ude00abc', false],
  ['two high surrogates then a low one', '\ud83d\ud83d\ude00', false],
];

for (const [name, text, expected] of TEXTS) {
  test(`isWellFormed: ${name} is ${expected ? 'well-formed' : 'ill-formed'}`, () => {
    assert.equal(isWellFormed(text), expected);
  });
}

test('illFormed is INVALID_ARGUMENT naming the field, reason invalid_utf16', () => {
  const error = illFormed('metadata.k');
  assert.equal(error.code, 'INVALID_ARGUMENT');
  assert.deepEqual(error.metadata, { field: 'metadata.k', reason: 'invalid_utf16' });
  assert.match(error.message, /^metadata\.k contains a lone UTF-16 surrogate/);
});

test('truncate never ends in half of a surrogate pair', () => {
  assert.equal(truncate('abc', 3), 'abc');
  assert.equal(truncate('abcd', 3), 'abc');
  assert.equal(truncate('ab😀', 3), 'ab', 'cutting at 3 would keep the high half of the emoji');
  assert.equal(truncate('ab😀c', 4), 'ab😀');
  assert.equal(truncate('😀😀', 1), '');
  for (let max = 0; max <= 8; max++) assert.ok(isWellFormed(truncate('x😀y😀😀', max)), `max ${max}`);
});
