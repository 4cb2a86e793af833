/** host:port addresses, shared by every listener and the CLI: the configuration's shape, both ways. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatAddress, joinAddress, splitAddress } from '../../src/api/host-port.js';
import { loadConfig } from '../../src/config/load.js';

describe('host:port', () => {
  const cases: Array<[string, string, number]> = [
    ['127.0.0.1:50051', '127.0.0.1', 50051],
    ['localhost:0', 'localhost', 0],
    ['localhost:9090', 'localhost', 9090],
    ['[::1]:8080', '::1', 8080],
    ['[::]:1', '::', 1],
  ];
  for (const [address, host, port] of cases) {
    it(`${address} splits and joins back`, () => {
      assert.deepEqual(splitAddress(address), { host, port });
      assert.equal(joinAddress(host, port), address);
    });
  }

  it('refuses what is not host:port', () => {
    for (const bad of ['50051', ':8080', '::1:80', 'host:65536', 'host:port', '']) assert.throws(() => splitAddress(bad), RangeError, bad);
  });

  it('admits exactly what the configuration admits', () => {
    for (const address of ['127.0.0.1:1', '[::1]:0', 'my-host.example:65535']) {
      assert.equal(loadConfig({ argv: [`--server.http_addr=${address}`], env: {} }).server.http_addr, address);
      assert.doesNotThrow(() => splitAddress(address));
    }
    for (const address of ['host:65536', 'under_score:1']) {
      assert.throws(() => loadConfig({ argv: [`--server.http_addr=${address}`], env: {} }));
      assert.throws(() => splitAddress(address), RangeError);
    }
  });

  it('formats a bound address, IPv6 in brackets', () => {
    assert.equal(formatAddress({ address: '::1', family: 'IPv6', port: 5 }), '[::1]:5');
    assert.equal(formatAddress({ address: '127.0.0.1', family: 'IPv4', port: 5 }), '127.0.0.1:5');
    assert.equal(formatAddress('/tmp/socket'), '/tmp/socket');
    assert.throws(() => formatAddress(null), /not listening/);
  });
});
