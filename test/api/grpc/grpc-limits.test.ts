/**
 * Message size limits and deadlines over real gRPC: a module over
 * `max_module_size` is PAYLOAD_TOO_LARGE (status RESOURCE_EXHAUSTED) with its
 * trailer; a request past the receive limit is refused by grpc-js; a unary
 * call running past `request_timeout` or the client's deadline ends with
 * DEADLINE_EXCEEDED. The server stays up through all of them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { status } from '@grpc/grpc-js';
import type { RemoteError } from '../../../src/api/grpc/grpc-client.js';
import { ENVELOPE_BYTES } from '../../../src/api/grpc/grpc-server-options.js';
import { example } from '../../agents/agent-fixtures.js';
import { assertError, failure, startGrpcTestServer, SUITE_TIMEOUT, type GrpcTestServer } from './grpc-harness.js';

const LIMIT = 64 * 1024;

describe('message size limits', SUITE_TIMEOUT, () => {
  let s: GrpcTestServer;
  before(async () => {
    s = await startGrpcTestServer({ 'runtime.max_module_size': LIMIT });
  });
  after(() => s.stop());

  it('a module of max_module_size plus one byte is PAYLOAD_TOO_LARGE, status RESOURCE_EXHAUSTED', async () => {
    const error = await failure(s.client.deploy({ name: 'big', wasm_module: new Uint8Array(LIMIT + 1) }));
    assertError(error, 'PAYLOAD_TOO_LARGE', status.RESOURCE_EXHAUSTED, { reason: 'module_too_large', limit: String(LIMIT), size: String(LIMIT + 1) });
  });

  it('a request past the receive limit is refused before it is read (RESOURCE_EXHAUSTED, no trailer)', async () => {
    const error = await failure(s.client.deploy({ name: 'huge', wasm_module: new Uint8Array(LIMIT + ENVELOPE_BYTES + 1) }));
    assert.equal(error.grpcCode, status.RESOURCE_EXHAUSTED);
    assert.equal(error.code, 'RESOURCE_EXHAUSTED');
    assert.equal(error.body.trace_id, '');
  });

  it('a module within the limit still deploys, and the server is healthy', async () => {
    const { agent_id } = await s.client.deploy({ name: 'small', wasm_module: example('echo') });
    assert.equal((await s.client.health()).status, 'healthy');
    await s.client.undeploy(agent_id);
  });
});

describe('deadlines', SUITE_TIMEOUT, () => {
  let s: GrpcTestServer;
  before(async () => {
    // Shorter than any deploy (admission compiles the module, the agent starts on a worker).
    s = await startGrpcTestServer({ 'server.request_timeout': '1ms' });
  });
  after(() => s.stop());

  it('a call running past request_timeout ends with DEADLINE_EXCEEDED and the trailer', async () => {
    const error = await failure(s.client.deploy({ name: 'slow', wasm_module: example('echo') }));
    assertError(error, 'DEADLINE_EXCEEDED', status.DEADLINE_EXCEEDED);
  });

  it("a client's deadline is honoured", async () => {
    const error = await failure(s.client.deploy({ name: 'hurried', wasm_module: example('counter') }, { timeoutMs: 1 }));
    assert.equal(error.grpcCode, status.DEADLINE_EXCEEDED);
  });

  it('a stream ends with DEADLINE_EXCEEDED at its deadline and releases its subscription', async () => {
    const before = s.subscribers();
    const stream = s.client.subscribe({}, { timeoutMs: 150 });
    const code = await new Promise<number>((resolve) => stream.on('error', (e: { code: number }) => resolve(e.code)));
    assert.equal(code, status.DEADLINE_EXCEEDED);
    for (let i = 0; i < 100 && s.subscribers() > before; i++) await new Promise((resolve) => setTimeout(resolve, 5));
    assert.equal(s.subscribers(), before);
    assert.equal(s.grpc.stats().streams, 0);
  });

  it('the server still answers', async () => {
    // Health may or may not beat 1 ms; either way the server answered with its own error, not a dropped call.
    try {
      assert.equal((await s.client.health()).status, 'healthy');
    } catch (error) {
      assertError(error as RemoteError, 'DEADLINE_EXCEEDED', status.DEADLINE_EXCEEDED);
    }
  });
});
