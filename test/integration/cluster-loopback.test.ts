/**
 * Three `svc start` processes on 127.0.0.1, each with its own ports and data
 * directory, joined through the first one's gossip address (issue 43):
 * membership, the gossiped registry, and messages between nodes, replies
 * included. Every wait is a bounded poll of an answer or a log line.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Metadata, credentials, status } from '@grpc/grpc-js';
import WebSocket from 'ws';
import { clusterClientConstructor } from '../../src/cluster/cluster-proto.js';
import { createNodeClients } from '../../src/cluster/node-clients.js';
import type { SvcError } from '../../src/errors/svc-error.js';
import { example } from '../agents/agent-fixtures.js';
import { startNode, startThreeNodes, stopNodes, type ClusterNode } from './cluster-processes.js';
import { deployExample, logged, request, runSvc, startSvc, until } from './svc-process.js';




const members = (node: ClusterNode) => request(`${node.api}/api/v1/cluster/members`);
type MemberBody = { node_id: string; state: string; agents: number; grpc_address: string; http_address: string };
const memberList = (body: Record<string, unknown>) => (body.members ?? []) as MemberBody[];

describe('a three-node cluster on loopback', () => {
  const dirs: string[] = [];
  const nodes: ClusterNode[] = [];

  before(async () => {
    const started = await startThreeNodes('svc-cluster');
    nodes.push(...started.nodes);
    dirs.push(...started.dirs);
  });

  after(() => stopNodes(nodes, dirs));

  it('every node lists the three members alive, with their API addresses, and logs each join', async () => {
    for (const node of nodes) {
      const answer = await until('three alive members', () => members(node), (a) => memberList(a.body).filter((m) => m.state === 'alive').length === 3);
      const listed = memberList(answer.body);
      assert.deepEqual(listed.map((m) => m.node_id).sort(), nodes.map((n) => n.id).sort());
      for (const m of listed) {
        const other = nodes.find((n) => n.id === m.node_id)!;
        assert.equal(`http://${m.http_address}`, other.api);
        assert.notEqual(m.grpc_address, '');
      }
    }
    const others = nodes.slice(1).map((n) => n.id);
    for (const id of others) {
      const line = await logged(nodes[0]!.svc, `the join of ${id}`, (l) => l.msg === 'cluster member changed' && l.node_id === id && l.to === 'alive');
      assert.equal(line.from, 'none');
      assert.equal(line.reason, 'joined');
    }
  });

  it('an agent deployed on one node is listed and answered on the others, with its node', async () => {
    const [a, b, c] = nodes as [ClusterNode, ClusterNode, ClusterNode];
    const deployed = await deployExample(a.api, 'echo-a');
    assert.equal(deployed.status, 201);
    const agentId = String(deployed.body.agent_id);
    for (const node of [b, c]) {
      const listed = await until('the agent listed', () => request(`${node.api}/api/v1/agents`), (ans) => ((ans.body.agents ?? []) as Array<{ agent_id: string }>).some((x) => x.agent_id === agentId));
      const entry = (listed.body.agents as Array<{ agent_id: string; node_id: string; name: string }>).find((x) => x.agent_id === agentId)!;
      assert.equal(entry.node_id, a.id);
      assert.equal(entry.name, 'echo-a');
      const got = await request(`${node.api}/api/v1/agents/${agentId}`);
      assert.equal(got.status, 200);
      assert.equal(got.body.node_id, a.id);
      assert.equal(got.body.state === 'running' || got.body.state === 'hibernated' || got.body.state === 'executing', true, String(got.body.state));
    }
    // The name is taken cluster-wide.
    const again = await deployExample(c.api, 'echo-a');
    assert.equal(again.status, 409);
    assert.equal(again.body.code, 'ALREADY_EXISTS');
    const counted = await until('the agent counted on its node', () => members(b), (ans) => memberList(ans.body).find((m) => m.node_id === a.id)?.agents === 1);
    assert.equal(memberList(counted.body).find((m) => m.node_id === b.id)?.agents, 0);
  });

  it('a client sending through another node gets the reply there', async () => {
    const [a, , c] = nodes as [ClusterNode, ClusterNode, ClusterNode];
    const deployed = await deployExample(a.api, 'echo-reply');
    const agentId = String(deployed.body.agent_id);
    await until('the agent known on c', () => request(`${c.api}/api/v1/agents/${agentId}`), (ans) => ans.status === 200);
    const socket = new WebSocket(`${c.api.replace('http', 'ws')}/api/v1/agents/${agentId}/messages`);
    const replies: Array<{ sender: string; receiver: string; content: unknown }> = [];
    socket.on('message', (data: Buffer) => replies.push(JSON.parse(data.toString()) as (typeof replies)[number]));
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    try {
      const sent = await request(`${c.api}/api/v1/agents/${agentId}/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ message_type: 'request', content: 'hello across' }),
      });
      assert.equal(sent.status, 202, JSON.stringify(sent.body));
      const deadline = Date.now() + 30_000;
      while (!replies.some((m) => m.sender === agentId) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      const reply = replies.find((m) => m.sender === agentId);
      assert.ok(reply, `a reply from the agent on node a reached the client on node c: ${JSON.stringify(replies)}`);
      assert.equal(reply.receiver, 'client:anonymous');
    } finally {
      socket.close();
    }
  });

  it('agents on two nodes play ping-pong', async () => {
    const [a, b] = nodes as [ClusterNode, ClusterNode, ClusterNode];
    const pong = await deployExample(b.api, 'pong-b', 'pong' as 'echo');
    const ping = await deployExample(a.api, 'ping-a', 'ping' as 'echo');
    assert.equal(pong.status, 201);
    assert.equal(ping.status, 201);
    const pongId = String(pong.body.agent_id);
    const pingId = String(ping.body.agent_id);
    await until('pong known on a', () => request(`${a.api}/api/v1/agents/${pongId}`), (ans) => ans.status === 200);
    // The registry spreads by gossip: pong's answer finds ping only once node b has heard of it.
    await until('ping known on b', () => request(`${b.api}/api/v1/agents/${pingId}`), (ans) => ans.status === 200);
    const started = await request(`${a.api}/api/v1/agents/${pingId}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ message_type: 'request', content: `start:${pongId}:3` }),
    });
    assert.equal(started.status, 202);
    await until(
      'three pongs back on node a',
      () => request(`${a.api}/api/v1/agents/${pingId}/messages`),
      (ans) => ((ans.body.messages ?? []) as Array<{ sender: string }>).filter((m) => m.sender === pongId).length === 3,
    );
  });

  it('an agent on another node without message:receive refuses an agent\'s message: the sender gets the failure', async () => {
    const [a, b] = nodes as [ClusterNode, ClusterNode, ClusterNode];
    const deaf = await request(`${b.api}/api/v1/agents`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'deaf-b', capabilities: ['message:send'], wasm_module: Buffer.from(example('pong')).toString('base64') }),
    });
    assert.equal(deaf.status, 201, JSON.stringify(deaf.body));
    const deafId = String(deaf.body.agent_id);
    const ping = await deployExample(a.api, 'ping-deaf', 'ping' as 'echo');
    const pingId = String(ping.body.agent_id);
    await until('deaf known on a', () => request(`${a.api}/api/v1/agents/${deafId}`), (ans) => ans.status === 200);
    await request(`${a.api}/api/v1/agents/${pingId}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ message_type: 'request', content: `start:${deafId}:1` }),
    });
    const answer = await until(
      'the failure back on node a',
      () => request(`${a.api}/api/v1/agents/${pingId}/messages`),
      (ans) => ((ans.body.messages ?? []) as Array<{ sender: string; message_type: string }>).some((m) => m.sender === 'platform' && m.message_type === 'failure'),
    );
    const failure = (answer.body.messages as Array<{ sender: string; message_type: string; metadata: Record<string, string> }>).find((m) => m.message_type === 'failure')!;
    assert.equal(failure.metadata.failure_reason, 'permission_denied');
  });

  it('counts members by state and forwarded messages in its metrics', async () => {
    const answer = await request(`${nodes[2]!.api}/api/v1/metrics`);
    const samples = answer.body.samples as Array<{ name: string; labels: Record<string, string>; value: number }>;
    const value = (name: string, labels: Record<string, string> = {}) => samples.find((x) => x.name === name && Object.entries(labels).every(([k, v]) => x.labels[k] === v))?.value;
    assert.equal(value('svc_cluster_members', { state: 'alive' }), 3);
    assert.equal(value('svc_cluster_members', { state: 'dead' }), 0);
    assert.ok((value('svc_cluster_messages_forwarded_total') ?? 0) >= 1);
    assert.equal(value('svc_cluster_failovers_total'), 0);
  });

  it('svc cluster members lists them from any node', async () => {
    const run = await runSvc(['cluster', 'members', '--server', nodes[1]!.grpc, '-o', 'json'], dirs[1]!).done;
    assert.equal(run.code, 0, run.stderr);
    const listed = (JSON.parse(run.stdout) as { members: MemberBody[] }).members;
    assert.deepEqual(listed.map((m) => m.node_id).sort(), nodes.map((n) => n.id).sort());
  });

  it('refuses a node-to-node call without the proof, and stays up', async () => {
    const Client = clusterClientConstructor();
    const client = new Client(nodes[0]!.grpc, credentials.createInsecure());
    try {
      const code = await new Promise<number>((resolve) => {
        (client as unknown as Record<string, (r: unknown, m: Metadata, cb: (e: { code: number } | null) => void) => void>).Deliver!.call(client, { messages: [] }, new Metadata(), (error) => resolve(error?.code ?? status.OK));
      });
      assert.equal(code, status.UNAUTHENTICATED);
    } finally {
      client.close();
    }
    assert.equal((await request(`${nodes[0]!.api}/api/v1/health`)).status, 200);
  });

  it('a message for an agent no node hosts is refused on every node', async () => {
    for (const node of nodes) {
      const sent = await request(`${node.api}/api/v1/agents/01NOSUCHAGENT0000000000000/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ message_type: 'request', content: 'x' }),
      });
      assert.equal(sent.status, 404);
      assert.equal(sent.body.code, 'NOT_FOUND');
    }
  });

  it('an agent is undeployed through another node, and disappears everywhere', async () => {
    const [a, b, c] = nodes as [ClusterNode, ClusterNode, ClusterNode];
    const deployed = await deployExample(a.api, 'short-lived');
    const agentId = String(deployed.body.agent_id);
    await until('known on b', () => request(`${b.api}/api/v1/agents/${agentId}`), (ans) => ans.status === 200);
    const removed = await request(`${b.api}/api/v1/agents/${agentId}`, { method: 'DELETE' });
    assert.equal(removed.status, 200, JSON.stringify(removed.body));
    for (const node of [a, b, c]) await until('gone', () => request(`${node.api}/api/v1/agents/${agentId}`), (ans) => ans.status === 404);
  });

  it('two deploys of one name on two nodes at once: exactly one is acknowledged, the other is ALREADY_EXISTS', async () => {
    const [a, b] = nodes as [ClusterNode, ClusterNode, ClusterNode];
    for (const round of [1, 2, 3]) {
      const name = `raced-${round}`;
      const answers = await Promise.all([deployExample(a.api, name), deployExample(b.api, name)]);
      assert.deepEqual(answers.map((x) => x.status).sort(), [201, 409], JSON.stringify(answers.map((x) => x.body)));
      assert.equal(answers.find((x) => x.status === 409)!.body.code, 'ALREADY_EXISTS');
      const winner = String(answers.find((x) => x.status === 201)!.body.agent_id);
      for (const node of nodes) {
        await until('one agent under the name', () => request(`${node.api}/api/v1/agents`), (ans) => ((ans.body.agents ?? []) as Array<{ agent_id: string; name: string }>).filter((x) => x.name === name).map((x) => x.agent_id).join() === winner);
      }
    }
  });

  it('node-to-node calls with bad input are refused with the documented error, and the node stays up', async () => {
    const clients = createNodeClients({ nodeId: 'tester', key: undefined, now: () => Date.now() });
    const node = { node_id: nodes[0]!.id, grpc_address: nodes[0]!.grpc };
    try {
      const module = Buffer.from(example('echo'));
      await assert.rejects(clients.storeModule(node, '0'.repeat(64), module), (err: SvcError) => err.code === 'INVALID_ARGUMENT' && err.metadata.reason === 'sha256_mismatch');
      await assert.rejects(clients.storeModule(node, '1'.repeat(64), undefined), (err: SvcError) => err.code === 'NOT_FOUND');
      await assert.rejects(clients.fetchModule(node, '2'.repeat(64)), (err: SvcError) => err.code === 'NOT_FOUND');
      await assert.rejects(
        clients.handOver(node, { entry: { agent_id: '', node_id: 'x', name: 'x', state: 'running', module_sha256: '', module_size: 0, capabilities: [], created_at: 0, version: 1, deleted: false }, snapshot: undefined }),
        (err: SvcError) => err.code === 'INVALID_ARGUMENT',
      );
    } finally {
      clients.close();
    }
    assert.equal((await request(`${nodes[0]!.api}/api/v1/health`)).status, 200);
  });

  it('a node that leaves is seen left; restarted without seeds, it rejoins through the members it last knew', async () => {
    const [a, b] = nodes as [ClusterNode, ClusterNode, ClusterNode];
    const c = nodes.pop()!;
    const run = await c.svc.stop();
    assert.equal(run.code, 0);
    await until('c left, as a seen from b', () => members(b), (ans) => memberList(ans.body).find((m) => m.node_id === c.id)?.state === 'left');
    const restarted = await startNode(dirs[2]!, []);
    nodes.push(restarted);
    assert.equal(restarted.id, c.id);
    for (const node of [a, b]) await until('c alive again', () => members(node), (ans) => memberList(ans.body).find((m) => m.node_id === c.id)?.state === 'alive');
  });
});

describe('a cluster node without cluster.secret', () => {
  it('refuses to start on an address that is not loopback, naming the setting', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-cluster-open-'));
    try {
      const svc = startSvc(dir, [], { SVC_CLUSTER_ADDR: '10.1.2.3:7946' });
      const run = await svc.running.done;
      assert.equal(run.code, 1);
      assert.match(run.stdout + run.stderr, /cluster\.addr/);
      assert.match(run.stdout + run.stderr, /cluster\.secret/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
