/**
 * AgentService as the doors call it: validation naming the field, error codes
 * for every refusal, durable deploy with a first start that must succeed,
 * undeploy collecting the module, paged listing with runtime state merged,
 * health and metrics.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createSimulatedClock } from '../../supervisors/index.js';
import { isSvcError } from '../../src/errors/svc-error.js';
import { VERSION } from '../../src/version.js';
import { INITIALIZE_TRAPS, compile } from './agent-wat.js';
import { TEST_TIMEOUT_MS, ask, ctx, deploy, example, startTestServer } from './agent-fixtures.js';

const isCode = (code: string, metadata: Record<string, string> = {}) => (error: unknown) =>
  isSvcError(error) && error.code === code && Object.entries(metadata).every(([k, v]) => error.metadata[k] === v);

const request = (overrides: Record<string, unknown> = {}) => ({ name: 'agent', wasm_module: example('echo'), capabilities: [], resources: { memory_limit: 0, cpu_shares: 0 }, ...overrides });

describe('AgentService', { timeout: TEST_TIMEOUT_MS }, () => {
  it('refuses a malformed deploy request, naming the field', async () => {
    const t = await startTestServer({ clock: createSimulatedClock() });
    try {
      const cases: Array<[Record<string, unknown>, Record<string, string>]> = [
        [{ name: '' }, { field: 'name', reason: 'required' }],
        [{ name: 7 }, { field: 'name', reason: 'wrong_type' }],
        [{ wasm_module: undefined }, { field: 'wasm_module', reason: 'required' }],
        [{ wasm_module: 'AGFzbQ==' }, { field: 'wasm_module', reason: 'wrong_type' }],
        [{ capabilities: 'search' }, { field: 'capabilities', reason: 'wrong_type' }],
        [{ capabilities: ['ok', ''] }, { field: 'capabilities[1]', reason: 'required' }],
        [{ resources: { memory_limit: 2 ** 40 } }, { field: 'resources.memory_limit', reason: 'out_of_range' }],
        [{ resources: { cpuShares: -1 } }, { field: 'resources.cpuShares', reason: 'wrong_type' }],
      ];
      for (const [overrides, metadata] of cases) {
        await assert.rejects(t.service.deploy(request(overrides) as never, ctx), isCode('INVALID_ARGUMENT', metadata), JSON.stringify(metadata));
      }
      await assert.rejects(t.service.deploy(request({ wasm_module: new Uint8Array([0, 1, 2, 3]) }) as never, ctx), isCode('INVALID_MODULE', { reason: 'malformed' }));
      assert.equal(t.host().store.countAgents(), 0);
    } finally {
      await t.stop();
    }
  });

  it('refuses a module over max_module_size with PAYLOAD_TOO_LARGE', async () => {
    const t = await startTestServer({ clock: createSimulatedClock(), overrides: { 'runtime.max_module_size': '8KiB' } });
    try {
      await assert.rejects(t.service.deploy(request({ wasm_module: example('counter') }) as never, ctx), isCode('PAYLOAD_TOO_LARGE', { reason: 'module_too_large' }));
    } finally {
      await t.stop();
    }
  });

  it('acknowledges a deploy once durable and running; names are unique; max_agents holds under concurrent deploys', async () => {
    const t = await startTestServer({ clock: createSimulatedClock(), overrides: { 'runtime.max_agents': 3 } });
    try {
      const id = await deploy(t, example('echo'), 'first', { memory_limit: 1 << 20, cpu_shares: 10 });
      const stored = t.host().store.getAgent(id);
      assert.ok(stored, 'stored before the answer');
      assert.equal(stored.desiredState, 'running');
      assert.equal(t.host().get(id)!.state, 'running');
      await assert.rejects(deploy(t, example('echo'), 'first'), isCode('ALREADY_EXISTS'));
      const results = await Promise.allSettled([1, 2, 3, 4].map((i) => deploy(t, example('counter'), `more-${i}`)));
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 2);
      for (const r of results) if (r.status === 'rejected') assert.ok(isCode('RESOURCE_EXHAUSTED', { reason: 'max_agents', limit: '3' })(r.reason));
      assert.equal(t.host().store.countAgents(), 3);
    } finally {
      await t.stop();
    }
  });

  it('a first start that fails (the _initialize traps) fails the deploy and removes the record and module', async () => {
    const t = await startTestServer({ clock: createSimulatedClock() });
    try {
      const module = await compile(INITIALIZE_TRAPS);
      await assert.rejects(deploy(t, module, 'broken'), isCode('INVALID_MODULE', { reason: 'trap' }));
      assert.equal(t.host().store.countAgents(), 0);
      assert.equal(t.host().size, 0);
      const admitted = await t.server.admission.admit(module);
      assert.equal(t.host().store.getModule(admitted.sha256), undefined, 'the module was collected');
    } finally {
      await t.stop();
    }
  });

  it('gets, lists in pages with the runtime state merged, and undeploys collecting unreferenced modules', async () => {
    const t = await startTestServer({ clock: createSimulatedClock() });
    try {
      const a = await deploy(t, example('echo'), 'a');
      const b = await deploy(t, example('echo'), 'b');
      const c = await deploy(t, example('counter'), 'c');
      const agent = await t.service.get(a, ctx);
      assert.equal(agent.name, 'a');
      assert.equal(agent.state, 'running');
      assert.deepEqual(agent.resources, { memory_limit: 64 * 1024 * 1024, cpu_shares: 1024 });
      assert.match(agent.module_sha256, /^[0-9a-f]{64}$/);
      assert.equal(agent.module_size, example('echo').length);
      assert.match(agent.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.equal(agent.node_id, t.server.nodeId);
      assert.ok(agent.memory_bytes > 0);

      const first = await t.service.list({ page_size: 2 }, ctx);
      assert.deepEqual(first.agents.map((x) => x.agent_id), [a, b]);
      assert.ok(first.agents.every((x) => x.state === 'running'));
      const second = await t.service.list({ page_size: 2, page_token: first.next_page_token }, ctx);
      assert.deepEqual(second.agents.map((x) => x.agent_id), [c]);
      assert.equal(second.next_page_token, '');
      await assert.rejects(t.service.list({ page_token: 'garbage' }, ctx), isCode('INVALID_ARGUMENT', { field: 'page_token' }));
      await assert.rejects(t.service.list({ page_size: -1 }, ctx), isCode('INVALID_ARGUMENT', { field: 'page_size' }));

      const echoSha = agent.module_sha256;
      await t.service.undeploy(a, ctx);
      await assert.rejects(t.service.get(a, ctx), isCode('NOT_FOUND'));
      assert.ok(t.host().store.getModule(echoSha), 'b still uses the echo module');
      await t.service.undeploy(b, ctx);
      assert.equal(t.host().store.getModule(echoSha), undefined, 'collected with its last agent');
      await assert.rejects(t.service.undeploy(b, ctx), isCode('NOT_FOUND'));
      await assert.rejects(t.service.get('', ctx), isCode('INVALID_ARGUMENT', { field: 'agent_id' }));
    } finally {
      await t.stop();
    }
  });

  it('reports health and metrics, and refuses work once stopped', async () => {
    const t = await startTestServer({ clock: createSimulatedClock(), overrides: { 'runtime.max_agents': 50 } });
    try {
      const echo = await deploy(t, example('echo'), 'a');
      await deploy(t, example('counter'), 'b');
      await ask(t, t.events(), echo, 'hello');
      // The per-message counts reach the registry once per turn of the event loop (metric-tally.ts): the turn after this one.
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(await t.service.health({ principal: 'p', trace_id: 'abc' }), { status: 'healthy', version: VERSION, agents: { running: 2, capacity: 50 }, trace_id: 'abc' });
      const { samples } = await t.service.metrics(ctx);
      const value = (name: string, labels: Record<string, string> = {}) =>
        samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
      assert.equal(value('svc_agents_total'), 2);
      assert.equal(value('svc_agents_active'), 2);
      assert.equal(value('svc_messages_sent_total', { message_type: 'request' }), 1);
      assert.equal(value('svc_messages_received_total', { message_type: 'request' }), 1);
      assert.equal(value('svc_agent_executions_total', { status: 'success' }), 1);
      assert.equal(value('svc_message_queue_size'), 0);
      assert.ok((value('svc_wasm_memory_usage_bytes', { agent_id: echo }) ?? 0) > 0);
      await t.service.undeploy(echo, ctx);
      const after = (await t.service.metrics(ctx)).samples;
      assert.equal(after.find((s) => s.name === 'svc_wasm_memory_usage_bytes' && s.labels['agent_id'] === echo), undefined, 'an undeployed agent leaves no series');
    } finally {
      await t.stop();
    }
    assert.equal((await t.service.health(ctx)).status, 'unavailable');
    await assert.rejects(deploy(t, example('echo'), 'late'), isCode('UNAVAILABLE'));
    await assert.rejects(t.service.send({ receiver: 'x', message_type: 'inform' }, ctx), isCode('UNAVAILABLE'));
  });
});
