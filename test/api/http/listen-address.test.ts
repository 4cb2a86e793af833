import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatAddress, parseListenAddress } from '../../../src/api/http/listen-address.js';

test('host:port, IPv6 in brackets, both ways', () => {
  assert.deepEqual(parseListenAddress('127.0.0.1:8080'), { host: '127.0.0.1', port: 8080 });
  assert.deepEqual(parseListenAddress('[::1]:0'), { host: '::1', port: 0 });
  assert.deepEqual(parseListenAddress('localhost:9090'), { host: 'localhost', port: 9090 });
  assert.equal(formatAddress({ address: '::1', family: 'IPv6', port: 5 }), '[::1]:5');
  assert.equal(formatAddress({ address: '127.0.0.1', family: 'IPv4', port: 5 }), '127.0.0.1:5');
  for (const bad of ['8080', ':8080', 'host:65536', 'host:port', '']) assert.throws(() => parseListenAddress(bad), /invalid listen address/);
});
