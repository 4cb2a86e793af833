/**
 * Message size limits and deadlines over real gRPC: a module over
 * `max_module_size` is PAYLOAD_TOO_LARGE (status RESOURCE_EXHAUSTED) with its
 * trailer; a request past the receive limit (or inflating past it) is
 * refused by grpc-js before it is read, as PAYLOAD_TOO_LARGE with the
 * trailer too; a unary call running past `request_timeout` or the client's
 * deadline ends with DEADLINE_EXCEEDED. The server stays up through all of them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { status } from '@grpc/grpc-js';
import http2 from 'node:http2';
import { remoteError, type RemoteError } from '../../../src/api/grpc/grpc-client.js';
import { ERROR_TRAILER } from '../../../src/api/grpc/grpc-errors.js';
import { loadManagementProto } from '../../../src/api/proto.js';
import { ENVELOPE_BYTES } from '../../../src/api/grpc/grpc-server-options.js';
import { example } from '../../agents/agent-fixtures.js';
import { assertError, failure, rawCall, rawClient, startGrpcTestServer, SUITE_TIMEOUT, type GrpcTestServer } from './grpc-harness.js';

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

  it('a request past the receive limit is refused before it is read: PAYLOAD_TOO_LARGE with the trailer', async () => {
    const size = LIMIT + ENVELOPE_BYTES + 1;
    const error = await failure(s.client.deploy({ name: 'huge', wasm_module: new Uint8Array(size) }));
    assertError(error, 'PAYLOAD_TOO_LARGE', status.RESOURCE_EXHAUSTED, { reason: 'too_large', limit: String(LIMIT + ENVELOPE_BYTES) });
    // The request message: the module plus its field tag and length, and the name.
    assert.ok(Number(error.body.metadata.size) > size, JSON.stringify(error.body.metadata));
  });

  it('a gzip request that inflates past the receive limit: PAYLOAD_TOO_LARGE with the trailer', async () => {
    // 2 = gzip; zeros compress to a few hundred bytes on the wire.
    const client = rawClient(s.address, { 'grpc.default_compression_algorithm': 2 });
    try {
      const { error } = await rawCall(client, 'DeployAgent', { name: 'bomb', wasm_module: new Uint8Array(LIMIT + ENVELOPE_BYTES + 1) });
      assert.ok(error !== null);
      assertError(remoteError(error), 'PAYLOAD_TOO_LARGE', status.RESOURCE_EXHAUSTED, { reason: 'too_large', limit: String(LIMIT + ENVELOPE_BYTES) });
    } finally {
      client.close();
    }
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

  it("the server's answer at a client's deadline carries the trailer", async () => {
    // The grpc-timeout header alone, on a raw stream: the client side sets no timer of its own, so the server's answer is read.
    const session = http2.connect(`http://${s.address}`);
    try {
      const request = session.request({ ':method': 'POST', ':path': '/svc.v1.ManagementService/Health', 'content-type': 'application/grpc', te: 'trailers', 'grpc-timeout': '1m' });
      // No request message and no end of stream: the call waits for its message until the deadline passes.
      request.write(Buffer.alloc(0));
      const trailers = await new Promise<http2.IncomingHttpHeaders>((resolve, reject) => {
        let fields: http2.IncomingHttpHeaders = {};
        request.on('response', (h) => (fields = { ...fields, ...h }));
        // The server ends its side with the trailers; ours is still open, so the answer is complete there.
        request.on('trailers', (h) => resolve({ ...fields, ...h }));
        request.on('data', () => undefined);
        request.on('error', reject);
        request.on('close', () => resolve(fields));
      });
      assert.equal(Number(trailers['grpc-status']), status.DEADLINE_EXCEEDED);
      const bytes = trailers[ERROR_TRAILER];
      assert.equal(typeof bytes, 'string', 'the svc-error-bin trailer was sent');
      const body = loadManagementProto().decodeError(Buffer.from(String(bytes), 'base64'));
      assert.equal(body.code, 'DEADLINE_EXCEEDED');
      assert.match(body.trace_id, /^[0-9a-f]{32}$/);
    } finally {
      session.close();
    }
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
