/**
 * Messages sent to an agent while its node hands it over (issue 43): three
 * whole servers of one cluster in this process. The owner starts leaving;
 * messages sent to the agent at once, on the leaving node and from another
 * node, are held and answered by the new owner, none refused.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ctx, example, TEST_TIMEOUT_MS } from '../agents/agent-fixtures.js';
import { clusterSecret, startThreeClusterServers, until, type ClusterServer } from './cluster-servers.js';

const forwarded = async (node: ClusterServer) => (await node.server.metrics.toSamples()).samples.find((s) => s.name === 'svc_cluster_messages_forwarded_total')?.value ?? 0;

describe('messages during a hand-over', { timeout: TEST_TIMEOUT_MS }, () => {
  const secret = clusterSecret();
  const nodes: ClusterServer[] = [];

  before(async () => {
    nodes.push(...(await startThreeClusterServers(secret)));
  });

  after(async () => {
    await Promise.all(nodes.map((n) => n.stop()));
  });

  it('are held and delivered by the new owner once it acknowledged, not refused', async () => {
    const [a, b, c] = nodes as [ClusterServer, ClusterServer, ClusterServer];
    const { agent_id: agentId } = await a.server.service.deploy({ name: 'held-counter', wasm_module: example('counter'), capabilities: [], resources: { memory_limit: 0, cpu_shares: 0 } }, ctx);
    for (const node of [b, c]) {
      await until('the agent known', async () => (await node.server.service.get(agentId, ctx).catch(() => undefined))?.node_id === a.id);
    }
    const agent = a.server.host()!.get(agentId)!;
    const before = await forwarded(a);
    // Leaving starts the hand-over at once: from here the agent takes no messages on this node.
    const leaving = a.server.stop();
    assert.equal(agent.accepting, false, 'the hand-over has begun');
    const send = (node: ClusterServer, i: number) => node.server.service.send({ receiver: agentId, message_type: 'request', content: `held ${i}` }, ctx);
    const outcomes = await Promise.allSettled([send(a, 1), send(a, 2), send(b, 3), send(c, 4), send(a, 5)]);
    await leaving;
    const refused = outcomes.filter((o) => o.status === 'rejected');
    assert.deepEqual(refused, [], 'every message was accepted');
    assert.ok((await forwarded(a)) - before >= 3, 'the leaving node held its own clients\' messages and sent them on');
    let owner: ClusterServer | undefined;
    await until('the agent on b or c', async () => {
      const id = (await b.server.service.get(agentId, ctx).catch(() => undefined))?.node_id;
      owner = id === b.id ? b : id === c.id ? c : undefined;
      return owner !== undefined;
    });
    await until('the new owner received the five', () => (owner!.server.host()?.get(agentId)?.messagesReceived ?? 0) >= 5);
  });
});
