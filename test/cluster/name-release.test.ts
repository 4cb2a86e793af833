/**
 * A deploy that fails after its name was claimed cluster-wide releases the
 * claim, so a retry of the name through another node is not refused (two
 * whole servers in this process).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CallContext } from '../../src/agents/agent-service-types.js';
import { isSvcError } from '../../src/errors/svc-error.js';
import { example } from '../agents/agent-fixtures.js';
import { INITIALIZE_TRAPS } from '../agents/agent-wat.js';
import { wat } from '../helpers/wat.js';
import { startInProcessNode, type InProcessNode } from './in-process-nodes.js';

const ctx: CallContext = { principal: 'tester', trace_id: 'trace-name-release' };
const resources = { memory_limit: 0, cpu_shares: 0 };

describe('a failed deploy in a cluster', () => {
  let a: InProcessNode;
  let b: InProcessNode;

  before(async () => {
    a = await startInProcessNode();
    b = await startInProcessNode({ seed: a.gossip });
    const deadline = Date.now() + 30_000;
    while (a.server.cluster?.agents()?.members().filter((m) => m.state === 'alive').length !== 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  });

  after(async () => {
    await b?.stop();
    await a?.stop();
  });

  it('releases its name: a retry of the name through the other node is deployed at once', async () => {
    const broken = await wat(INITIALIZE_TRAPS);
    await assert.rejects(a.server.service.deploy({ name: 'retried', wasm_module: broken, capabilities: [], resources }, ctx), (error: unknown) => isSvcError(error) && error.code === 'INVALID_MODULE');
    const { agent_id } = await b.server.service.deploy({ name: 'retried', wasm_module: example('echo'), capabilities: [], resources }, ctx);
    assert.equal((await b.server.service.get(agent_id, ctx)).name, 'retried');
  });
});
