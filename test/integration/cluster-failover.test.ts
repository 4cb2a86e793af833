/**
 * Replication and failover with real processes (issue 43): three `svc
 * start` processes on 127.0.0.1 with the default cluster settings. A deploy
 * is acknowledged once a second node stores its module; a SIGKILLed node's
 * agents start on a survivor with their ids and names; restarted, the node
 * does not start them again. Every wait is a bounded poll.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { allAlive, startNode, startThreeNodes, stopNodes, type ClusterNode } from './cluster-processes.js';
import { deployExample, request, until } from './svc-process.js';



type Listed = { agent_id: string; name: string; node_id: string; state: string };
const agents = async (node: ClusterNode) => ((await request(`${node.api}/api/v1/agents`)).body.agents ?? []) as Listed[];

/** Modules a node holds for others, read from its SQLite file beside the running server (WAL lets a reader in). */
function replicaCount(node: ClusterNode): number {
  const db = new Database(join(node.dir, 'svc.db'), { readonly: true, fileMustExist: true });
  try {
    return db.prepare<[], number>('SELECT count(*) FROM module_replicas').pluck().get() ?? 0;
  } finally {
    db.close();
  }
}

function metric(body: Record<string, unknown>, name: string): number {
  const samples = body.samples as Array<{ name: string; value: number }>;
  return samples.find((s) => s.name === name)?.value ?? 0;
}

describe('replication and failover across three processes', () => {
  const nodes: ClusterNode[] = [];
  const dirs: string[] = [];

  before(async () => {
    const started = await startThreeNodes('svc-failover');
    nodes.push(...started.nodes);
    dirs.push(...started.dirs);
    await allAlive(nodes, 3);
  });

  after(() => stopNodes(nodes, dirs));

  it('a deploy is acknowledged once the module is stored on a second node; a SIGKILLed node\'s agents answer from a survivor; restarted, it runs no copy', async () => {
    const [a, b, c] = nodes as [ClusterNode, ClusterNode, ClusterNode];
    const ids = new Map<string, string>();
    for (const name of ['fo-1', 'fo-2', 'fo-3']) {
      const deployed = await deployExample(c.api, name);
      assert.equal(deployed.status, 201, JSON.stringify(deployed.body));
      ids.set(String(deployed.body.agent_id), name);
      // replication_factor 2: durable on one other node when the deploy answered.
      assert.equal(replicaCount(a) + replicaCount(b), 1);
    }
    for (const node of [a, b]) await until('the agents known', async () => ({ status: 200, body: { agents: await agents(node) } }), (ans) => (ans.body.agents as Listed[]).filter((x) => ids.has(x.agent_id)).length === 3);

    await c.svc.kill();
    nodes.pop();
    for (const node of [a, b]) {
      await until(
        'every agent running on a survivor, with its id and name',
        async () => ({ status: 200, body: { agents: await agents(node) } }),
        (ans) => {
          const moved = (ans.body.agents as Listed[]).filter((x) => ids.has(x.agent_id));
          return moved.length === 3 && moved.every((x) => (x.node_id === a.id || x.node_id === b.id) && x.name === ids.get(x.agent_id) && x.state !== 'failed');
        },
      );
    }
    for (const [agentId] of ids) {
      const sent = await request(`${a.api}/api/v1/agents/${agentId}/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message_type: 'request', content: 'after the crash' }) });
      assert.equal(sent.status, 202, JSON.stringify(sent.body));
    }
    const failovers = metric((await request(`${a.api}/api/v1/metrics`)).body, 'svc_cluster_failovers_total') + metric((await request(`${b.api}/api/v1/metrics`)).body, 'svc_cluster_failovers_total');
    assert.equal(failovers, 3, 'each agent failed over exactly once');
    const line = [...a.svc.logs(), ...b.svc.logs()].find((l) => l.msg === 'agent failed over');
    assert.equal(line?.from, c.id);

    const restarted = await startNode(c.dir, [a.gossip]);
    nodes.push(restarted);
    assert.equal(restarted.id, c.id);
    const deleted = restarted.svc.logs().filter((l) => l.msg === 'stored agent runs on another node now: deleted here, not restored');
    assert.deepEqual(deleted.map((l) => String(l.agent_id)).sort(), [...ids.keys()].sort());
    await until('c lists each agent once, on a survivor', async () => ({ status: 200, body: { agents: await agents(restarted) } }), (ans) => {
      const listed = (ans.body.agents as Listed[]).filter((x) => ids.has(x.agent_id));
      return listed.length === 3 && listed.every((x) => x.node_id !== c.id);
    });
    for (const node of [a, b]) {
      const listed = (await agents(node)).filter((x) => ids.has(x.agent_id));
      assert.equal(listed.length, 3);
      assert.equal(new Set(listed.map((x) => x.agent_id)).size, 3);
      assert.ok(listed.every((x) => x.node_id !== c.id));
    }
    const answered = await request(`${restarted.api}/api/v1/agents/${[...ids.keys()][0]!}/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message_type: 'request', content: 'through the restarted node' }) });
    assert.equal(answered.status, 202, JSON.stringify(answered.body));
  });

  it('a node stopped with SIGTERM hands its agents over first, with their state: a counter counts on', async () => {
    const [a, b, c] = nodes as [ClusterNode, ClusterNode, ClusterNode];
    const deployed = await deployExample(c.api, 'handed-counter', 'counter');
    assert.equal(deployed.status, 201, JSON.stringify(deployed.body));
    const agentId = String(deployed.body.agent_id);
    const call = (node: ClusterNode) => request(`${node.api}/api/v1/agents/${agentId}/call`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message_type: 'request', content: 'count' }) });
    for (const expected of ['1', '2', '3']) {
      const answer = await call(c);
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.equal(answer.body.content, expected);
    }
    const run = await c.svc.stop();
    nodes.pop();
    assert.equal(run.code, 0);
    const handed = [...a.svc.logs(), ...b.svc.logs()].find((l) => l.msg === 'agent handed over' && l.agent_id === agentId);
    assert.ok(handed, 'a survivor logged the hand-over before the node left');
    assert.equal(handed.from, c.id);
    assert.equal(handed.state_kept, true);
    const owner = handed.to === a.id ? a : b;
    const listed = await until('the counter listed on its new node', async () => ({ status: 200, body: { agents: await agents(a) } }), (ans) => (ans.body.agents as Listed[]).some((x) => x.agent_id === agentId && x.node_id === owner.id));
    assert.equal((listed.body.agents as Listed[]).filter((x) => x.agent_id === agentId).length, 1);
    const next = await call(owner);
    assert.equal(next.status, 200, JSON.stringify(next.body));
    assert.equal(next.body.content, '4', 'the count survived the hand-over');
    const failovers = metric((await request(`${a.api}/api/v1/metrics`)).body, 'svc_cluster_failovers_total') + metric((await request(`${b.api}/api/v1/metrics`)).body, 'svc_cluster_failovers_total');
    assert.equal(failovers, 3, 'a hand-over is not a failover: only the three of the crash are counted');
  });
});
