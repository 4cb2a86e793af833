/**
 * ListAgents on one node of two (whole servers in this process) shows the
 * other node's agents with the counters that node answers, and marks a
 * node that does not answer.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createNodeClients } from '../../src/cluster/node-clients.js';
import { deployExample, request, until } from '../integration/svc-process.js';
import { startInProcessNode, type InProcessNode } from './in-process-nodes.js';

type Listed = { agent_id: string; node_id: string; state: string; messages_received: number; messages_sent: number; memory_bytes: number };

const listOn = async (node: InProcessNode) => {
  const answer = await request(`${node.api}/api/v1/agents`);
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body as { agents: Listed[]; unreachable_nodes?: string[] };
};

describe('ListAgents across two nodes', () => {
  let a: InProcessNode;
  let b: InProcessNode;
  let echo: string;
  const N = 7;

  before(async () => {
    a = await startInProcessNode();
    b = await startInProcessNode({ seed: a.gossip });
    const deployed = await deployExample(b.api, 'echo-counted');
    assert.equal(deployed.status, 201, JSON.stringify(deployed.body));
    echo = String(deployed.body.agent_id);
    await until('echo known on a', () => request(`${a.api}/api/v1/agents/${echo}`), (answer) => answer.status === 200);
  });

  after(async () => {
    await b?.stop();
    await a?.stop();
  });

  it(`an agent on the other node that received ${N} messages reads ${N} in the list on this node`, async () => {
    for (let i = 0; i < N; i++) {
      const sent = await request(`${a.api}/api/v1/agents/${echo}/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message_type: 'request', content: `n${i}` }) });
      assert.equal(sent.status, 202);
    }
    await until('the echo handled them on b', () => request(`${b.api}/api/v1/agents/${echo}`), (answer) => answer.body.messages_received === N && answer.body.messages_sent === N);
    const listed = await listOn(a);
    const entry = listed.agents.find((agent) => agent.agent_id === echo);
    assert.ok(entry, 'the echo is listed on a');
    assert.equal(entry.node_id, b.server.nodeId);
    assert.equal(entry.messages_received, N);
    assert.equal(entry.messages_sent, N);
    assert.ok(entry.memory_bytes > 0, 'memory as b reads it');
    assert.equal(listed.unreachable_nodes, undefined);
  });

  it('GetAgents leaves out ids the called node does not host, answers an empty list with none, and ReleaseName of a claim nobody holds is a no-op', async () => {
    const clients = createNodeClients({ nodeId: 'tester', key: undefined, now: () => Date.now() });
    const node = { node_id: b.server.nodeId, grpc_address: b.grpc };
    try {
      const answered = await clients.getAgents(node, ['01NOSUCHAGENT0000000000000', 'not an id', echo], 5_000);
      assert.deepEqual(answered.map((agent) => agent.agent_id), [echo]);
      assert.deepEqual(await clients.getAgents(node, [], 5_000), []);
      await clients.releaseName(node, 'never-claimed', '01NOSUCHAGENT0000000000000');
    } finally {
      clients.close();
    }
    assert.equal((await request(`${b.api}/api/v1/health`)).status, 200);
  });

  it('a node whose gRPC listener is down is named in unreachable_nodes, its agents listed from the registry; the list still answers', async () => {
    await b.listeners.drain();
    const listed = await listOn(a);
    assert.deepEqual(listed.unreachable_nodes, [b.server.nodeId]);
    const entry = listed.agents.find((agent) => agent.agent_id === echo);
    assert.ok(entry, 'still listed');
    assert.equal(entry.node_id, b.server.nodeId);
    assert.equal(entry.messages_received, 0);
    assert.equal((await request(`${a.api}/api/v1/health`)).status, 200);
  });
});
