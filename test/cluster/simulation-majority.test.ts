import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startSimAgentNode, type SimAgentNode } from '../../src/cluster/simulation-agents.js';
import { createSimCluster, simAddress } from '../../src/cluster/simulation.js';
import { createLogger } from '../../src/telemetry/logger.js';

/*
 * What this replay does not assert (docs/cluster.md, "Two copies around a cut"): during the cut the
 * majority may start an agent before the minority has stopped its copy (the minority waits one
 * suspicion timeout before it stops); that overlap is measured here, not bounded.
 */

const log = createLogger({ level: 'fatal', enabled: false });

/** Each agent id with the nodes running it now. */
function copies(nodes: readonly SimAgentNode[]): Map<string, string[]> {
  const running = new Map<string, string[]>();
  for (const n of nodes) {
    for (const [agentId, state] of n.agents) {
      if (state === 'running') running.set(agentId, [...(running.get(agentId) ?? []), n.node.id]);
    }
  }
  return running;
}

describe('the majority rule in the simulated cluster', () => {
  it('a cut leaves a minority: it stops its agents, the majority fails them over, and once healed each agent runs exactly once', async (t) => {
    const sim = createSimCluster({ seed: 43 });
    const ids = ['n0', 'n1', 'n2', 'n3', 'n4'];
    const nodes: SimAgentNode[] = [];
    for (const id of ids) nodes.push(await startSimAgentNode(sim, id, id === 'n0' ? [] : [simAddress('n0')], log));
    const agentIds: string[] = [];
    for (const n of nodes) {
      for (const k of [0, 1]) {
        const agentId = `agent-${n.node.id}-${k}`;
        n.deploy(agentId);
        agentIds.push(agentId);
      }
    }
    assert.ok(await sim.until(() => sim.allSee(ids, 'alive') && nodes.every((n) => n.registry.live().length === agentIds.length), 20_000), 'the cluster forms and every registry lists the ten agents');

    const majority = nodes.slice(0, 3);
    const minority = nodes.slice(3);
    sim.network.partition(majority.map((n) => n.node.address), minority.map((n) => n.node.address));
    const cutAt = sim.clock.now();
    const minorityAgents = agentIds.filter((a) => minority.some((n) => a.startsWith(`agent-${n.node.id}-`)));
    let overlapMs = 0;
    const settled = await sim.until(() => {
      const running = copies(nodes);
      if (agentIds.some((a) => (running.get(a)?.length ?? 0) > 1)) overlapMs += 100;
      for (const agentId of agentIds) {
        const where = running.get(agentId) ?? [];
        assert.ok(!(where.length > 1 && where.some((id) => majority.some((n) => n.node.id === id)) && where.some((id) => minority.some((n) => n.node.id === id)) && minority.some((n) => where.includes(n.node.id) && !agentId.startsWith(`agent-${n.node.id}-`))), `the minority never starts another node's agent during the cut: ${agentId} on ${JSON.stringify(where)}`);
      }
      return minority.every((n) => n.failover.verdict === 'minority' && [...n.agents.values()].every((s) => s === 'stopped')) && agentIds.every((a) => running.get(a)?.length === 1 && majority.some((n) => running.get(a)![0] === n.node.id));
    }, 60_000);
    assert.ok(settled !== undefined, 'the minority stopped its agents and the majority runs every agent, each once');
    t.diagnostic(`during the cut, some agent ran on both sides for ${overlapMs} simulated ms`);
    assert.ok(majority.every((n) => n.failover.verdict === 'majority'));
    assert.equal(majority.reduce((sum, n) => sum + n.failovers(), 0), minorityAgents.length, 'the majority failed the minority\'s agents over, each once');
    assert.ok(sim.clock.now() - cutAt < 30_000);

    sim.network.heal();
    // From the heal on, checked every 100 simulated ms: never two copies of an agent.
    const healed = await sim.until(() => {
      const running = copies(nodes);
      for (const agentId of agentIds) assert.ok((running.get(agentId)?.length ?? 0) <= 1, `${agentId} never runs twice after the heal: ${JSON.stringify(running.get(agentId))}`);
      return sim.allSee(ids, 'alive') && agentIds.every((a) => running.get(a)?.length === 1);
    }, 120_000);
    assert.ok(healed !== undefined, 'the cluster healed, each agent running once');
    // Long after the heal: still exactly one copy of each, where every registry says it runs.
    for (let second = 0; second < 30; second++) {
      await sim.run(1_000);
      const running = copies(nodes);
      for (const agentId of agentIds) assert.equal(running.get(agentId)?.length, 1, `${agentId} runs once, ${second + 1} s after the heal: ${JSON.stringify(running.get(agentId))}`);
    }
    const running = copies(nodes);
    for (const agentId of agentIds) {
      const owner = running.get(agentId)![0]!;
      for (const n of nodes) assert.equal(n.registry.get(agentId)?.node_id, owner, `${n.node.id}'s registry names ${owner} for ${agentId}`);
    }
    for (const n of nodes) n.stop();
    await sim.stopAll();
  });
});
