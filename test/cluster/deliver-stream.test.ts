/**
 * Messages between two whole servers in this process, with a cluster
 * secret, over the DeliverStream of each pair of nodes: every message
 * answered, order kept, refusals carried back, and every stream that does
 * not prove itself refused while the node stays up.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Metadata, credentials, status, type ClientDuplexStream, type ServiceError } from '@grpc/grpc-js';
import WebSocket from 'ws';
import { clusterClientConstructor, clusterPath } from '../../src/cluster/cluster-proto.js';
import type { DeliverFrameOutcomesProto, DeliverFrameProto } from '../../src/cluster/deliver-streams.js';
import { callKeyFrom, signCall, signFrame, TIME_HEADER } from '../../src/cluster/node-call-auth.js';
import { createNodeClients } from '../../src/cluster/node-clients.js';
import type { Message } from '../../src/bus/message.js';
import { deployExample, request, until } from '../integration/svc-process.js';
import { startInProcessNode, type InProcessNode } from './in-process-nodes.js';

const SECRET = Buffer.alloc(32, 5);
const ENV = { SVC_CLUSTER_SECRET: SECRET.toString('base64') };
const KEY = callKeyFrom(SECRET);
const PATH = clusterPath('DeliverStream');

type Stream = ClientDuplexStream<DeliverFrameProto, DeliverFrameOutcomesProto>;

/** A raw DeliverStream to `grpc`, opened with `headers`. */
function rawStream(grpc: string, headers: Record<string, string>): { stream: Stream; close(): void } {
  const Client = clusterClientConstructor();
  const client = new Client(grpc, credentials.createInsecure());
  const metadata = new Metadata();
  for (const [name, value] of Object.entries(headers)) metadata.set(name, value);
  const stream = (client as unknown as { DeliverStream(m: Metadata): Stream }).DeliverStream(metadata);
  return { stream, close: () => client.close() };
}

/** The first answer frame, or the status the stream ended with. */
function firstAnswer(stream: Stream): Promise<DeliverFrameOutcomesProto | number> {
  return new Promise((resolve) => {
    stream.once('data', (frame: DeliverFrameOutcomesProto) => resolve(frame));
    stream.once('error', (error: ServiceError) => resolve(error.code));
  });
}

let made = 0;
const message = (receiver: string, content: unknown): Message => ({
  message_id: `01JCROSSNODE${String((made += 1)).padStart(14, '0')}`,
  sender: 'client:tester',
  receiver,
  message_type: 'request',
  content,
  conversation_id: 'c-1',
  metadata: {},
  created_at: new Date().toISOString(),
});

describe('DeliverStream between two nodes with a cluster secret', () => {
  let a: InProcessNode;
  let b: InProcessNode;
  let echo: string;

  before(async () => {
    // Room in each agent's history for the 100 messages and their 100 replies.
    const argv = ['--runtime.message_history_size=500'];
    a = await startInProcessNode({ env: ENV, argv });
    b = await startInProcessNode({ env: ENV, argv, seed: a.gossip });
    const deployed = await deployExample(b.api, 'echo-b');
    assert.equal(deployed.status, 201, JSON.stringify(deployed.body));
    echo = String(deployed.body.agent_id);
    await until('echo known on a', () => request(`${a.api}/api/v1/agents/${echo}`), (answer) => answer.status === 200);
  });

  after(async () => {
    await b?.stop();
    await a?.stop();
  });

  it('carries 100 messages sent at once to an agent on the other node in the order node a accepted them, and every reply back', async () => {
    const socket = new WebSocket(`${a.api.replace('http', 'ws')}/api/v1/agents/${echo}/messages`);
    let replies = 0;
    const allReplies = new Promise<void>((resolve) =>
      socket.on('message', (data: Buffer) => {
        if ((JSON.parse(data.toString()) as { sender: string }).sender === echo && (replies += 1) === 100) resolve();
      }),
    );
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    try {
      const sent = await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          request(`${a.api}/api/v1/agents/${echo}/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message_type: 'request', content: `m${i}` }) }),
        ),
      );
      assert.deepEqual(new Set(sent.map((answer) => answer.status)), new Set([202]));
      await allReplies;
      // Message ids are monotonic ULIDs made as node a accepts each message: their order is the order it accepted them.
      const accepted = sent.map((answer) => String(answer.body.message_id)).sort();
      const onB = await request(`${b.api}/api/v1/agents/${echo}/messages`);
      const arrived = ((onB.body.messages ?? []) as Array<{ sender: string; message_id: string }>).filter((m) => m.sender === 'client:anonymous').map((m) => m.message_id);
      assert.deepEqual(arrived, accepted);
    } finally {
      socket.close();
    }
  });

  it('carries the far node\'s refusal back per message: an agent it does not host is unknown_receiver', async () => {
    const clients = createNodeClients({ nodeId: 'tester', key: KEY, now: () => Date.now() });
    try {
      const node = { node_id: b.server.nodeId, grpc_address: b.grpc };
      const [unknown, known] = await Promise.all([clients.deliver(node, message('01NOSUCHAGENT0000000000000', 'x')), clients.deliver(node, message(echo, 'y'))]);
      assert.deepEqual(unknown, { ok: false, reason: 'unknown_receiver' });
      assert.deepEqual(known, { ok: true });
    } finally {
      clients.close();
    }
  });

  it('refuses a stream without the proof, a frame signed with another secret, and a frame out of sequence; the node stays up and delivers', async () => {
    const signed = () => signCall(KEY, PATH, 'tester', Date.now(), '');
    const frame = (headers: Record<string, string>, seq: number, key = KEY): DeliverFrameProto => {
      const messages = [JSON.stringify(message(echo, 'z'))];
      return { seq, messages, mac: signFrame(key, PATH, 'tester', headers[TIME_HEADER]!, seq, messages.join('\n')) };
    };
    const cases: Array<[string, Record<string, string>, (headers: Record<string, string>) => DeliverFrameProto]> = [
      ['no proof', {}, () => ({ seq: 1, messages: [], mac: '' })],
      ['another secret', signed(), (headers) => frame(headers, 1, callKeyFrom(Buffer.alloc(32, 6)))],
      ['out of sequence', signed(), (headers) => frame(headers, 2)],
    ];
    for (const [name, headers, make] of cases) {
      const { stream, close } = rawStream(b.grpc, headers);
      try {
        const answered = firstAnswer(stream);
        stream.write(make(headers));
        assert.equal(await answered, status.UNAUTHENTICATED, name);
      } finally {
        close();
      }
    }
    const headers = signed();
    const { stream, close } = rawStream(b.grpc, headers);
    try {
      const answered = firstAnswer(stream);
      stream.write({ ...frame(headers, 1), messages: ['{"not":"a message"}'], mac: signFrame(KEY, PATH, 'tester', headers[TIME_HEADER]!, 1, '{"not":"a message"}') });
      const answer = await answered;
      assert.notEqual(typeof answer, 'number');
      assert.deepEqual((answer as DeliverFrameOutcomesProto).outcomes, [{ ok: false, reason: 'unknown_receiver', detail: 'not a message this node can read' }]);
      stream.end();
    } finally {
      close();
    }
    assert.equal((await request(`${b.api}/api/v1/health`)).status, 200);
  });
});

describe('a connection that carries only node-to-node calls', () => {
  const TIMEOUT_MS = 300;
  let node: InProcessNode;

  before(async () => {
    node = await startInProcessNode({ env: ENV, argv: [`--server.connection_timeout=${TIMEOUT_MS}ms`] });
  });

  after(async () => {
    await node?.stop();
  });

  it('outlives server.connection_timeout: its stream keeps answering frames', async () => {
    const headers = signCall(KEY, PATH, 'tester', Date.now(), '');
    const { stream, close } = rawStream(node.grpc, headers);
    const broken = new Promise<string>((resolve) => stream.once('error', (error: ServiceError) => resolve(error.details)));
    try {
      const started = Date.now();
      for (let seq = 1; Date.now() - started < 4 * TIMEOUT_MS; seq++) {
        const messages = [JSON.stringify(message('01NOSUCHAGENT0000000000000', seq))];
        const answered = firstAnswer(stream);
        stream.write({ seq, messages, mac: signFrame(KEY, PATH, 'tester', headers[TIME_HEADER]!, seq, messages.join('\n')) });
        const answer = await Promise.race([answered, broken]);
        assert.equal(typeof answer, 'object', `frame ${seq} answered, not ${String(answer)}`);
        await new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS / 3));
      }
      stream.end();
    } finally {
      close();
    }
  });
});
