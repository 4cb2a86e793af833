/**
 * Strict JSON bodies (issue 41, item 5): invalid UTF-8 and a key given twice
 * are refused with the field named; what RFC 8259 allows passes unchanged.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isSvcError } from '../../../src/errors/svc-error.js';
import { parseStrictJson } from '../../../src/api/http/strict-json.js';

/** Bytes from text where `\xNN` escapes stand for raw bytes. */
function bytes(text: string): Buffer {
  return Buffer.from(text.replace(/\\x([0-9a-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))), 'latin1');
}

/** Text whose non-ASCII characters are UTF-8 encoded, as a client sends them. */
const utf8 = (text: string): Buffer => Buffer.from(text, 'utf8');

function refuses(body: Buffer, field: string, reason: string): void {
  assert.throws(
    () => parseStrictJson(body),
    (error: unknown) => {
      assert.ok(isSvcError(error), String(error));
      assert.equal(error.code, 'INVALID_ARGUMENT');
      assert.deepEqual([error.metadata.field, error.metadata.reason], [field, reason], error.message);
      return true;
    },
  );
}

describe('strict JSON: invalid UTF-8', () => {
  const cases: Array<[string, string, string]> = [
    ['a lone continuation byte in a value', '{"name":"echo\\x80"}', 'name'],
    ['a truncated sequence at the end of a value', '{"name":"caf\\xc3"}', 'name'],
    ['an overlong encoding of "/"', '{"name":"\\xc0\\xaf"}', 'name'],
    ['a UTF-16 surrogate encoded in UTF-8', '{"name":"\\xed\\xa0\\x80"}', 'name'],
    ['a code point above U+10FFFF', '{"name":"\\xf4\\x90\\x80\\x80"}', 'name'],
    ['0xFF in a nested value', '{"resources":{"memory_limit":"1\\xff"}}', 'resources.memory_limit'],
    ['in an array element', '{"capabilities":["ok","\\xe2\\x82"]}', 'capabilities[1]'],
    ['in a map value', '{"message":{"metadata":{"k":"v\\xfe"}}}', 'message.metadata.k'],
    ['in a key', '{"na\\xffme":"x"}', 'body'],
    ['in a nested key', '{"resources":{"memory\\xff":1}}', 'resources'],
    ['outside any string', '{"a":1}\\xff', 'body'],
  ];
  for (const [name, body, field] of cases) it(`${name}: names ${field}`, () => refuses(bytes(body), field, 'invalid_utf8'));

  it('two names that U+FFFD would have made equal are both refused', () => {
    refuses(bytes('{"name":"agent\\xff"}'), 'name', 'invalid_utf8');
    refuses(bytes('{"name":"agent\\xfe"}'), 'name', 'invalid_utf8');
  });

  it('names the byte offset of the first invalid byte, past a genuine U+FFFD', () => {
    const body = Buffer.concat([utf8('{"a":"\uFFFD","name":"'), Buffer.from([0xff]), utf8('"}')]);
    assert.throws(() => parseStrictJson(body), (error: unknown) => isSvcError(error) && error.metadata.offset === String(body.indexOf(0xff)) && error.metadata.field === 'name');
  });
});

describe('strict JSON: keys given twice', () => {
  const cases: Array<[string, string, string]> = [
    ['at the top', '{"name":"a","name":"b"}', 'name'],
    ['nested', '{"resources":{"cpu_shares":1,"cpu_shares":2}}', 'resources.cpu_shares'],
    ['spelled once with an escape', '{"name":"a","\\u006eame":"b"}', 'name'],
    ['in a map', '{"message":{"metadata":{"k":"1","k":"2"}}}', 'message.metadata.k'],
    ['in the second object of an array', '[{"x":1},{"x":1,"x":2}]', 'body[1].x'],
  ];
  for (const [name, body, field] of cases) it(`${name}: names ${field}`, () => refuses(Buffer.from(body), field, 'duplicate_key'));

  it('the same key in different objects, and keys that only look alike, are fine', () => {
    assert.deepEqual(parseStrictJson(Buffer.from('{"a":{"x":1},"b":{"x":2},"x":"\\"x\\":3","X":4}')), { a: { x: 1 }, b: { x: 2 }, x: '"x":3', X: 4 });
  });

  it('__proto__ is refused as a key at any depth', () => {
    refuses(Buffer.from('{"__proto__":{"admin":true}}'), '__proto__', 'forbidden_key');
    refuses(Buffer.from('{"message":{"metadata":{"__proto__":"x"}}}'), 'message.metadata.__proto__', 'forbidden_key');
  });
});

describe('strict JSON: what stays accepted', () => {
  it('escapes, backslashes before quotes, genuine U+FFFD and non-ASCII text', () => {
    const value = { name: 'caf\u00e9 \u{1F600} \uFFFD', content: 'a\\"b\\\\', nested: [{ k: '"}{][' }] };
    assert.deepEqual(parseStrictJson(utf8(JSON.stringify(value))), value);
  });

  it('an empty body is no fields set; a byte order mark is ignored', () => {
    assert.deepEqual(parseStrictJson(Buffer.alloc(0)), {});
    assert.deepEqual(parseStrictJson(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), utf8('{"a":1}')])), { a: 1 });
  });

  it('malformed JSON and a bare scalar stay malformed_json', () => {
    for (const body of ['{"a":', '"text"', '1', '{a:1}']) refuses(Buffer.from(body), 'body', 'malformed_json');
  });
});
