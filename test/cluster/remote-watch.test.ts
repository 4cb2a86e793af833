/**
 * Streams filtered by an agent follow it across nodes (issue 43): three
 * whole servers of one cluster in this process, a gRPC stream and a
 * WebSocket on the nodes that do not host the agent, compared with a stream
 * on the node that does; the watch's bad inputs; a hand-over on stop.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Metadata, credentials, type ClientReadableStream, type ServiceError } from '@grpc/grpc-js';
import WebSocket from 'ws';
import type { ProtoMessage } from '../../src/api/grpc/grpc-translate.js';
import { errorFromStatus } from '../../src/api/grpc/grpc-errors.js';
import { LIFECYCLE_ONTOLOGY } from '../../src/bus/lifecycle-message.js';
import { clusterClientConstructor, clusterPath } from '../../src/cluster/cluster-proto.js';
import { signCall } from '../../src/cluster/node-call-auth.js';
import { ctx, example, TEST_TIMEOUT_MS } from '../agents/agent-fixtures.js';
import { clusterSecret, startThreeClusterServers, until, type ClusterServer } from './cluster-servers.js';

interface Seen {
  readonly message_id: string;
  readonly sender: string;
  readonly receiver: string;
  readonly message_type: string;
  readonly ontology: string;
}

/** A gRPC stream's messages as they arrive, and whether its headers came (the subscription is in place). */
function collect(call: ClientReadableStream<ProtoMessage>): { seen: Seen[]; ready: () => boolean; error: () => ServiceError | undefined } {
  const seen: Seen[] = [];
  let ready = false;
  let failed: ServiceError | undefined;
  call.on('metadata', () => (ready = true));
  call.on('data', (m: ProtoMessage) => seen.push(m as unknown as Seen));
  call.on('error', (e: ServiceError) => (failed = e));
  return { seen, ready: () => ready, error: () => failed };
}

function openSocket(node: ClusterServer, agentId: string): Promise<{ socket: WebSocket; seen: Seen[] }> {
  const socket = new WebSocket(`ws://${node.http}/api/v1/agents/${agentId}/messages`);
  const seen: Seen[] = [];
  socket.on('message', (data: Buffer) => seen.push(JSON.parse(data.toString()) as Seen));
  return new Promise((resolve, reject) => {
    socket.once('open', () => resolve({ socket, seen }));
    socket.once('error', reject);
  });
}

/** The messages of a stream but the lifecycle informs (each node mints their ids). */
const traffic = (seen: readonly Seen[]) => seen.filter((m) => m.ontology !== LIFECYCLE_ONTOLOGY).map((m) => m.message_id);

async function deployEcho(node: ClusterServer, name: string): Promise<string> {
  const { agent_id } = await node.server.service.deploy({ name, wasm_module: example('echo'), capabilities: [], resources: { memory_limit: 0, cpu_shares: 0 } }, ctx);
  return agent_id;
}

const knows = async (node: ClusterServer, agentId: string, owner: string) => {
  try {
    return (await node.server.service.get(agentId, ctx)).node_id === owner;
  } catch {
    return false;
  }
};

/** A unary-free Watch call as another node would make it, signed with `key` (or not at all). */
function rawWatch(node: ClusterServer, agentId: string, sign: boolean): Promise<ServiceError> {
  const Client = clusterClientConstructor();
  const client = new Client(node.grpc, credentials.createInsecure());
  const metadata = new Metadata();
  if (sign) for (const [name, value] of Object.entries(signCall(undefined, clusterPath('Watch'), 'tester-node', Date.now(), agentId))) metadata.set(name, value);
  const call = (client as unknown as Record<string, (r: unknown, m: Metadata) => ClientReadableStream<unknown>>).Watch!.call(client, { agent_id: agentId }, metadata);
  return new Promise((resolve) => {
    call.on('data', () => undefined);
    call.on('error', (error: ServiceError) => {
      client.close();
      resolve(error);
    });
  });
}

describe('streams that follow an agent on another node', { timeout: TEST_TIMEOUT_MS }, () => {
  const secret = clusterSecret();
  const nodes: ClusterServer[] = [];

  before(async () => {
    nodes.push(...(await startThreeClusterServers(secret)));
  });

  after(async () => {
    await Promise.all(nodes.map((n) => n.stop()));
  });

  it('a gRPC stream and a WebSocket on other nodes see what a stream on the owner sees, in its order, each message once', async () => {
    const [a, b, c] = nodes as [ClusterServer, ClusterServer, ClusterServer];
    const agentId = await deployEcho(a, 'followed-echo');
    for (const node of [b, c]) await until('the agent known', () => knows(node, agentId, a.id));
    const owner = collect(a.client.subscribe({ agent_id: agentId }));
    const onB = collect(b.client.subscribe({ agent_id: agentId }));
    const onBInforms = collect(b.client.subscribe({ agent_id: agentId, message_types: ['inform'] }));
    const onC = await openSocket(c, agentId);
    try {
      await until('the streams in place', () => owner.ready() && onB.ready() && onBInforms.ready() && b.server.cluster!.watching().get(agentId) === a.id && c.server.cluster!.watching().get(agentId) === a.id);
      assert.equal(b.server.cluster!.watching().size, 1, 'one watch for the two streams on b');
      for (const [node, content] of [[a, 'from a'], [b, 'from b'], [c, 'from c']] as const) {
        await node.client.send({ receiver: agentId, message_type: 'request', content: JSON.stringify(content) });
      }
      // Three requests and the agent's three replies.
      await until('six messages on the owner', () => traffic(owner.seen).length === 6);
      const expected = traffic(owner.seen);
      await until('the same six on b and c', () => traffic(onB.seen).length >= 6 && traffic(onC.seen).length >= 6);
      assert.deepEqual(traffic(onB.seen), expected, 'the gRPC stream on b: the owner\'s messages, in its order, once each');
      assert.deepEqual(traffic(onC.seen), expected, 'the WebSocket on c: the same');
      await until('the three replies on the filtered stream', () => onBInforms.seen.filter((m) => m.sender === agentId).length === 3);
      assert.ok(onBInforms.seen.every((m) => m.message_type === 'inform'), 'message_types filters what comes from the owner');
      assert.equal(onB.error(), undefined);
    } finally {
      onC.socket.close();
    }
  });

  it('bad inputs get their documented errors, and the nodes stay up', async () => {
    const [a, b] = nodes as [ClusterServer, ClusterServer, ClusterServer];
    const unknown = collect(b.client.subscribe({ agent_id: 'no-such-agent' }));
    await until('the unknown agent refused', () => unknown.error() !== undefined);
    assert.equal(errorFromStatus(unknown.error()!).code, 'NOT_FOUND');
    const malformed = collect(b.client.subscribe({ agent_id: 'x', message_types: ['shout'] }));
    await until('the malformed filter refused', () => malformed.error() !== undefined);
    assert.equal(errorFromStatus(malformed.error()!).code, 'INVALID_ARGUMENT');

    const unsigned = await rawWatch(a, 'anything', false);
    assert.equal(errorFromStatus(unsigned).code, 'UNAUTHENTICATED');
    // Signed without the cluster's key: this cluster has a secret, so the proof is missing.
    const wrongKey = await rawWatch(a, 'anything', true);
    assert.equal(errorFromStatus(wrongKey).code, 'UNAUTHENTICATED');
    assert.equal(errorFromStatus(wrongKey).metadata?.['reason'], 'cluster_auth');

    const health = await Promise.all(nodes.map((n) => n.server.service.health(ctx)));
    assert.deepEqual(health.map((h) => h.status), ['healthy', 'healthy', 'healthy']);
  });

  it('streams keep following the agent when its node stops and hands it over', async () => {
    const [a, b, c] = nodes as [ClusterServer, ClusterServer, ClusterServer];
    const agentId = await deployEcho(a, 'handed-echo');
    for (const node of [b, c]) await until('the agent known', () => knows(node, agentId, a.id));
    const onB = collect(b.client.subscribe({ agent_id: agentId }));
    const onC = collect(c.client.subscribe({ agent_id: agentId }));
    await until('the watches in place', () => onB.ready() && onC.ready() && b.server.cluster!.watching().get(agentId) === a.id && c.server.cluster!.watching().get(agentId) === a.id);
    await a.stop();
    let owner = '';
    await until('the agent on b or c', async () => {
      owner = (await b.server.service.get(agentId, ctx).catch(() => ({ node_id: '' }))).node_id;
      return owner === b.id || owner === c.id;
    });
    const watcher = owner === b.id ? c : b;
    await until('the other node\'s watch moved to the new owner', () => watcher.server.cluster!.watching().get(agentId) === owner);
    for (const node of [b, c]) await node.client.send({ receiver: agentId, message_type: 'request', content: '"after the hand-over"' });
    for (const [name, stream] of [['b', onB], ['c', onC]] as const) {
      await until(`both replies on ${name}`, () => stream.seen.filter((m) => m.sender === agentId).length === 2);
      const ids = traffic(stream.seen);
      assert.equal(new Set(ids).size, ids.length, `no message twice on ${name}`);
      assert.equal(stream.error(), undefined);
    }
  });
});
