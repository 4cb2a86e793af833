/**
 * A stream filtered by an agent follows it through a failover, with real
 * processes (issue 43): three `svc start` processes on 127.0.0.1, an echo
 * agent on the third, a WebSocket on each of the other two. The agent's node
 * is SIGKILLed; once the agent runs on a survivor, both sockets see its
 * messages again: one from its own node now, the other through a watch of
 * the new owner. Every wait is a bounded poll.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { allAlive, startThreeNodes, stopNodes, type ClusterNode } from './cluster-processes.js';
import { deployExample, request, until } from './svc-process.js';



interface Framed {
  message_id: string;
  sender: string;
  content: unknown;
}

function openSocket(node: ClusterNode, agentId: string): Promise<{ socket: WebSocket; seen: Framed[] }> {
  const socket = new WebSocket(`${node.api.replace('http', 'ws')}/api/v1/agents/${agentId}/messages`);
  const seen: Framed[] = [];
  socket.on('message', (data: Buffer) => seen.push(JSON.parse(data.toString()) as Framed));
  return new Promise((resolve, reject) => {
    socket.once('open', () => resolve({ socket, seen }));
    socket.once('error', reject);
  });
}

const send = (node: ClusterNode, agentId: string, content: string) =>
  request(`${node.api}/api/v1/agents/${agentId}/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message_type: 'request', content }) });

/** Sends `content` through `node` until every socket saw the agent's reply to it (a socket may re-attach after the send). */
async function echoedOn(node: ClusterNode, agentId: string, content: string, sockets: ReadonlyArray<{ seen: Framed[] }>): Promise<void> {
  const answered = () => sockets.every((s) => s.seen.some((m) => m.sender === agentId && m.content === content));
  let sentAt = -Infinity;
  await until(`"${content}" echoed on every socket`, async () => {
    // Again each half second: a socket whose watch re-attached after a send missed it.
    if (!answered() && Date.now() - sentAt > 500) {
      sentAt = Date.now();
      assert.equal((await send(node, agentId, content)).status, 202);
    }
    return { status: 200, body: {} };
  }, answered);
}

describe('a stream follows its agent through a failover (three processes)', () => {
  const nodes: ClusterNode[] = [];
  const dirs: string[] = [];

  before(async () => {
    const started = await startThreeNodes('svc-follow');
    nodes.push(...started.nodes);
    dirs.push(...started.dirs);
    await allAlive(nodes, 3);
  });

  after(() => stopNodes(nodes, dirs));

  it('SIGKILL the owner: the WebSockets on the two other nodes keep receiving from the new owner', async () => {
    const [a, b, c] = nodes as [ClusterNode, ClusterNode, ClusterNode];
    const deployed = await deployExample(c.api, 'followed-through-failover');
    assert.equal(deployed.status, 201, JSON.stringify(deployed.body));
    const agentId = String(deployed.body.agent_id);
    for (const node of [a, b]) await until('the agent known', () => request(`${node.api}/api/v1/agents/${agentId}`), (ans) => ans.status === 200);
    const sockets = await Promise.all([openSocket(a, agentId), openSocket(b, agentId)]);
    try {
      await echoedOn(c, agentId, 'before the crash', sockets);

      await c.svc.kill();
      nodes.pop();
      for (const node of [a, b]) {
        await until('the agent on a survivor', () => request(`${node.api}/api/v1/agents/${agentId}`), (ans) => ans.status === 200 && (ans.body.node_id === a.id || ans.body.node_id === b.id));
      }
      await echoedOn(a, agentId, 'after the crash, through a', sockets);
      await echoedOn(b, agentId, 'after the crash, through b', sockets);
      for (const { socket, seen } of sockets) {
        assert.equal(socket.readyState, WebSocket.OPEN, 'the stream stayed open through the failover');
        const ids = seen.map((m) => m.message_id);
        assert.equal(new Set(ids).size, ids.length, 'no message framed twice');
      }
    } finally {
      for (const { socket } of sockets) socket.close();
    }
  });
});
