import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatHostPort, isLoopbackHost, isWildcardHost, parseHostPort } from '../../src/cluster/host-port.js';

describe('cluster host:port', () => {
  const parsed: Array<[string, string, number]> = [
    ['127.0.0.1:7946', '127.0.0.1', 7946],
    ['[::1]:0', '::1', 0],
    ['node-1.example:65535', 'node-1.example', 65535],
  ];
  for (const [text, host, port] of parsed) {
    it(`parses ${text}`, () => {
      assert.deepEqual(parseHostPort(text), { host, port });
      assert.equal(formatHostPort(host, port), text);
    });
  }

  for (const bad of ['', '127.0.0.1', ':7946', '127.0.0.1:65536', '::1:7946', 'host:port', 'a b:1']) {
    it(`refuses ${JSON.stringify(bad)}`, () => assert.throws(() => parseHostPort(bad), RangeError));
  }

  const loopback: Array<[string, boolean]> = [
    ['127.0.0.1', true],
    ['127.1.2.3', true],
    ['::1', true],
    ['localhost', true],
    ['0.0.0.0', false],
    ['10.0.0.1', false],
    ['127.example.com', false],
    ['::', false],
  ];
  for (const [host, expected] of loopback) {
    it(`${host} is ${expected ? '' : 'not '}loopback`, () => assert.equal(isLoopbackHost(host), expected));
  }

  it('knows the wildcard hosts', () => {
    assert.equal(isWildcardHost('0.0.0.0'), true);
    assert.equal(isWildcardHost('::'), true);
    assert.equal(isWildcardHost('127.0.0.1'), false);
  });
});
