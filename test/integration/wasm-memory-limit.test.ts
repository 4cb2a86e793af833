/**
 * Issue 41: `runtime.wasm_memory_limit` is the linear memory of one agent
 * (as the specification's limits table says), `runtime.wasm_memory_total`
 * that of all agents together. Through the real deploy path over REST.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadConfig } from '../../src/config/load.js';
import { maxAgentMemoryBytes } from '../../src/agents/agent-settings.js';
import { call, ECHO_WASM, startGateway } from '../api/http/http-fixtures.js';

const PAGE = 65_536;
const MiB = 1024 * 1024;
const echo = (name: string, memoryLimit = 0) => ({ name, wasm_module: ECHO_WASM.toString('base64'), resources: { memory_limit: memoryLimit } });

describe('wasm_memory_limit and wasm_memory_total', { timeout: 120_000 }, () => {
  it('defaults: 512 MiB per agent, 4 GiB in all; max_memory_pages (64 MiB) is the lower bound of an agent', () => {
    const { runtime } = loadConfig({ env: {}, cwd: '/', argv: [] });
    assert.equal(runtime.wasm_memory_limit, 512 * MiB);
    assert.equal(runtime.wasm_memory_total, 4 * 1024 * MiB);
    assert.equal(maxAgentMemoryBytes(runtime), 1024 * PAGE);
    const raised = loadConfig({ env: {}, cwd: '/', argv: ['--runtime.max_memory_pages=65536'] }).runtime;
    assert.equal(maxAgentMemoryBytes(raised), 512 * MiB, 'with more pages allowed, wasm_memory_limit bounds an agent');
    const odd = loadConfig({ env: {}, cwd: '/', argv: ['--runtime.wasm_memory_limit=100000'] }).runtime;
    assert.equal(maxAgentMemoryBytes(odd), PAGE, 'in whole pages, rounded down');
  });

  it('an agent may ask for up to wasm_memory_limit, and memory_limit 0 gets it; more is INVALID_ARGUMENT', async () => {
    const gw = await startGateway(['--runtime.max_memory_pages=65536', '--runtime.wasm_memory_limit=128MiB']);
    try {
      const deployed = await call(gw.base, 'POST', '/api/v1/agents', echo('default-limit'));
      assert.equal(deployed.status, 201, deployed.text);
      const agent = await call(gw.base, 'GET', `/api/v1/agents/${deployed.body.agent_id}`);
      assert.equal(agent.body.resources.memory_limit, 128 * MiB);
      assert.equal((await call(gw.base, 'POST', '/api/v1/agents', echo('at-limit', 128 * MiB))).status, 201);
      const over = await call(gw.base, 'POST', '/api/v1/agents', echo('over-limit', 128 * MiB + PAGE));
      assert.equal(over.status, 400, over.text);
      assert.equal(over.body.code, 'INVALID_ARGUMENT');
      assert.equal(over.body.metadata.field, 'resources.memory_limit');
      assert.equal((await call(gw.base, 'GET', '/health')).status, 200, 'the server is still up');
    } finally {
      await gw.stop();
    }
  });

  it('wasm_memory_total caps all agents together: past it a deploy is RESOURCE_EXHAUSTED (memory_limit), and the agents deployed keep running', async () => {
    // The echo example starts with one page: two fit in two pages, a third does not.
    const gw = await startGateway([`--runtime.wasm_memory_total=${2 * PAGE}`]);
    try {
      const first = await call(gw.base, 'POST', '/api/v1/agents', echo('first'));
      assert.equal(first.status, 201, first.text);
      assert.equal((await call(gw.base, 'POST', '/api/v1/agents', echo('second'))).status, 201);
      const third = await call(gw.base, 'POST', '/api/v1/agents', echo('third'));
      assert.equal(third.status, 429, third.text);
      assert.equal(third.body.code, 'RESOURCE_EXHAUSTED');
      assert.equal(third.body.metadata.reason, 'memory_limit');
      assert.equal((await call(gw.base, 'GET', `/api/v1/agents/${first.body.agent_id}`)).body.state, 'running');
    } finally {
      await gw.stop();
    }
  });
});
