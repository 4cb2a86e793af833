import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadConfig } from '../../../src/config/load.js';
import { channelOptionsFor, ENVELOPE_BYTES, grpcServerOptionsFrom } from '../../../src/api/grpc/grpc-server-options.js';

describe('grpcServerOptionsFrom', () => {
  it('reads the server section and max_module_size', () => {
    const config = loadConfig({ env: { SVC_GRPC_ADDR: '127.0.0.1:0', SVC_SERVER_MAX_CONNECTIONS: '7', SVC_RUNTIME_MAX_MODULE_SIZE: '1MiB' } });
    assert.deepEqual(grpcServerOptionsFrom(config), {
      address: '127.0.0.1:0',
      maxConnections: 7,
      connectionTimeoutMs: 30_000,
      requestTimeoutMs: 60_000,
      keepaliveTimeoutMs: 60_000,
      maxModuleSize: 1024 * 1024,
    });
  });

  it('lets a module of max_module_size and its envelope through, and sets keepalive from keepalive_timeout', () => {
    const options = channelOptionsFor({ address: 'x:1', maxConnections: 1, connectionTimeoutMs: 1, requestTimeoutMs: 1, keepaliveTimeoutMs: 45_000, maxModuleSize: 10 });
    assert.equal(options['grpc.max_receive_message_length'], 10 + ENVELOPE_BYTES);
    assert.equal(options['grpc.max_connection_idle_ms'], 45_000);
    assert.equal(options['grpc.keepalive_time_ms'], 45_000);
  });
});
