/**
 * The listener's connection limits over real sockets: `max_connections`
 * (refused cleanly: the call fails with UNAVAILABLE and the trailer, the
 * server keeps serving the others), `connection_timeout` (a connection that
 * never sends a request is closed) and `keepalive_timeout` (an idle
 * connection is closed).
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { status } from '@grpc/grpc-js';
import { createGrpcClient, type GrpcClient } from '../../../src/api/grpc/grpc-client.js';
import { splitAddress } from '../../../src/api/host-port.js';
import { createSimulatedClock } from '../../../supervisors/index.js';
import { waitFor } from '../../agents/agent-fixtures.js';
import { assertError, failure, startGrpcTestServer, SUITE_TIMEOUT, type GrpcTestServer } from './grpc-harness.js';

/** Its own connection: grpc-js otherwise shares one subchannel between clients of the same address. */
function ownConnection(address: string): GrpcClient {
  return createGrpcClient(address, { 'grpc.use_local_subchannel_pool': 1 });
}

describe('max_connections', SUITE_TIMEOUT, () => {
  let s: GrpcTestServer;
  before(async () => {
    s = await startGrpcTestServer({ 'server.max_connections': 2 });
  });
  after(() => s.stop());

  it('refuses the connection past the limit with UNAVAILABLE and the trailer, and keeps serving the others', async () => {
    // The harness's own client holds the first connection.
    await s.client.health();
    const second = ownConnection(s.address);
    await second.health();
    assert.equal(s.grpc.stats().connections, 2);

    const third = ownConnection(s.address);
    const error = await failure(third.health());
    assertError(error, 'UNAVAILABLE', status.UNAVAILABLE, { reason: 'connection_limit', limit: '2' });
    assert.ok(s.grpc.stats().refused >= 1);
    assert.equal(s.grpc.stats().connections, 2);

    assert.equal((await s.client.health()).status, 'healthy');
    assert.equal((await second.health()).status, 'healthy');

    // A connection closing makes room again.
    second.close();
    await waitFor(() => s.grpc.stats().connections === 1, 'the second connection to close');
    assert.equal((await third.health()).status, 'healthy');
    third.close();
  });

  it('survives a flood of connections past the limit', async () => {
    const { host, port } = splitAddress(s.address);
    const { refused } = s.grpc.stats();
    const sockets = Array.from({ length: 200 }, () => connect({ host, port }).on('error', () => undefined));
    // The flood reached the listener: at most the limit (2) accepted, every other one refused.
    await waitFor(() => s.grpc.stats().refused - refused >= 198, 'the flood to be refused');
    for (const socket of sockets) socket.destroy();
    assert.equal((await s.client.health()).status, 'healthy');
  });
});

describe('connection_timeout', SUITE_TIMEOUT, () => {
  let s: GrpcTestServer;
  const clock = createSimulatedClock();
  before(async () => {
    s = await startGrpcTestServer({ 'server.connection_timeout': '200ms' }, { clock });
  });
  after(() => s.stop());

  it('closes a connection that sends no request in time (on the injected clock)', async () => {
    const { host, port } = splitAddress(s.address);
    const before = s.grpc.stats().connections;
    // Read what the server sends (its HTTP/2 SETTINGS), or the socket never sees the server's close.
    const socket = connect({ host, port }).resume();
    let closed = false;
    const close = new Promise<void>((resolve) => socket.on('close', () => {
      closed = true;
      resolve();
    }).on('error', () => undefined));
    await waitFor(() => s.grpc.stats().connections === before + 1, 'the connection to be accepted');
    await clock.advance(199);
    assert.equal(closed, false, 'still open before connection_timeout');
    await clock.advance(1);
    await close;
    await waitFor(() => s.grpc.stats().connections === before, 'the listener to count the close');
  });

  it('keeps a connection that sent a request', async () => {
    const client = ownConnection(s.address);
    await client.health();
    const before = s.grpc.stats().connections;
    await clock.advance(400);
    assert.equal(s.grpc.stats().connections, before);
    assert.equal((await client.health()).status, 'healthy');
    client.close();
  });
});

describe('keepalive_timeout', SUITE_TIMEOUT, () => {
  let s: GrpcTestServer;
  before(async () => {
    s = await startGrpcTestServer({ 'server.keepalive_timeout': '300ms' });
  });
  after(() => s.stop());

  it('closes a connection idle for keepalive_timeout; the client reconnects on its next call', async () => {
    const client = ownConnection(s.address);
    await client.health();
    assert.ok(s.grpc.stats().connections >= 1);
    await waitFor(() => s.grpc.stats().connections === 0, 'idle connections to close', 3_000);
    assert.equal((await client.health()).status, 'healthy');
    client.close();
  });
});
