/**
 * Issue 41, item 6: a stream filtered by an agent carries the platform's
 * messages about that agent: the FIPA `failure` for a message sent to it
 * (sent to the message's sender, so no sender/receiver filter matched it
 * before) and its lifecycle transitions, as `inform`s of ontology
 * `svc-lifecycle`. On both doors: the gRPC SubscribeMessages stream and the
 * WebSocket of GET /api/v1/agents/{id}/messages, against one real server.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { WebSocket } from 'ws';
import { createGrpcClient, type GrpcClient } from '../../src/api/grpc/grpc-client.js';
import { grpcServerOptionsFrom } from '../../src/api/grpc/grpc-server-options.js';
import { createGrpcServer, type GrpcServer } from '../../src/api/grpc/grpc-server.js';
import { LIFECYCLE_ONTOLOGY } from '../../src/bus/lifecycle-message.js';
import { call, deployEcho, eventually, startGateway, type Gateway } from '../api/http/http-fixtures.js';

const CRASHER = readFileSync(fileURLToPath(new URL('../../examples/build/crasher.wasm', import.meta.url)));

interface Seen {
  sender: string;
  receiver: string;
  message_type: string;
  ontology?: string;
  in_reply_to?: string;
  metadata: Record<string, string>;
}

describe('a stream filtered by an agent carries the platform\'s messages about it', { timeout: 120_000 }, () => {
  let gw: Gateway;
  let grpcServer: GrpcServer;
  let grpc: GrpcClient;
  before(async () => {
    gw = await startGateway(['--server.grpc_addr=127.0.0.1:0']);
    grpcServer = createGrpcServer(gw.server.service, { ...grpcServerOptionsFrom(gw.config), tracing: gw.server.tracing, metrics: gw.server.metrics });
    grpc = createGrpcClient(await grpcServer.start());
  });
  after(async () => {
    grpc.close();
    await grpcServer.stop();
    await gw.stop();
  });

  it('the failure for a message that crashed the agent and its restart, on the gRPC stream and the WebSocket; not on another agent\'s stream', async () => {
    const deployed = await call(gw.base, 'POST', '/api/v1/agents', { name: 'crasher', wasm_module: CRASHER.toString('base64') });
    assert.equal(deployed.status, 201, deployed.text);
    const crasher = deployed.body.agent_id as string;
    const echo = await deployEcho(gw.base, 'bystander');

    const viaGrpc: Seen[] = [];
    const stream = grpc.subscribe({ agent_id: crasher });
    stream.on('data', (m: Seen) => viaGrpc.push(m));
    stream.on('error', () => undefined);
    await new Promise<void>((resolve, reject) => {
      stream.on('metadata', () => resolve());
      stream.on('error', reject);
    });
    const viaWs: Seen[] = [];
    const bystander: Seen[] = [];
    const open = (path: string, into: Seen[]) =>
      new Promise<WebSocket>((resolve, reject) => {
        const ws = new WebSocket(`ws://${gw.address}${path}`);
        ws.on('message', (data) => into.push(JSON.parse(String(data)) as Seen));
        ws.once('open', () => resolve(ws));
        ws.once('error', reject);
      });
    const sockets = [await open(`/api/v1/agents/${crasher}/messages`, viaWs), await open(`/api/v1/messages?agent_id=${echo}`, bystander)];
    try {
      const sent = await call(gw.base, 'POST', `/api/v1/agents/${crasher}/messages`, { message_type: 'request', content: 'crash' });
      assert.equal(sent.status, 202, sent.text);
      const messageId = sent.body.message_id as string;
      const failureOf = (seen: Seen[]) => seen.find((m) => m.sender === 'platform' && m.message_type === 'failure' && m.in_reply_to === messageId);
      const backUp = (seen: Seen[]) => seen.find((m) => m.ontology === LIFECYCLE_ONTOLOGY && m.metadata['to'] === 'running' && m.metadata['from'] === 'starting');
      for (const [door, seen] of [['gRPC', viaGrpc], ['WebSocket', viaWs]] as const) {
        const failure = await eventually(() => failureOf(seen), 10_000);
        assert.equal(failure.receiver, 'client:anonymous', `${door}: the failure goes to the sender`);
        assert.equal(failure.metadata['failed_receiver'], crasher, door);
        assert.equal(failure.metadata['failure_reason'], 'execution_crashed', door);
        const restarting = await eventually(() => seen.find((m) => m.ontology === LIFECYCLE_ONTOLOGY && m.metadata['to'] === 'restarting'), 10_000);
        assert.deepEqual([restarting.sender, restarting.receiver, restarting.message_type, restarting.metadata['agent_id']], ['platform', crasher, 'inform', crasher], door);
        await eventually(() => backUp(seen), 10_000);
      }
      assert.equal(failureOf(bystander), undefined, "another agent's stream does not carry it");
      assert.equal(bystander.filter((m) => m.ontology === LIFECYCLE_ONTOLOGY).length, 0);
    } finally {
      stream.cancel();
      for (const ws of sockets) ws.close();
    }
  });
});
