/**
 * Weighted fair queueing with real agents: under contention for execution
 * slots, agents run in proportion to their `cpu_shares`. Virtual time grows
 * by fuel, which a given execution burns the same every time, and every
 * message is queued before the first result comes back, so the order is
 * deterministic. What a CPU quota gives in wall time is a benchmark
 * (`npm run bench -- cpu-quota`).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createSimulatedClock } from '../../supervisors/index.js';
import { burner, compile } from './agent-wat.js';
import { CLIENT, TEST_TIMEOUT_MS, ctx, deliveredTo, deploy, startTestServer, until } from './agent-fixtures.js';

describe('CPU shares', { timeout: TEST_TIMEOUT_MS }, () => {
  it('agents contending for execution slots run in proportion to their cpu_shares', async () => {
    const t = await startTestServer({ clock: createSimulatedClock(), overrides: { 'runtime.executor_workers': 1, 'runtime.max_concurrent_executions': 1 } });
    try {
      const events = t.events();
      const module = await compile(burner(1_000));
      const small = await deploy(t, module, 'small', { memory_limit: 0, cpu_shares: 1024 });
      const large = await deploy(t, module, 'large', { memory_limit: 0, cpu_shares: 3072 });
      for (let i = 0; i < 50; i++) {
        await t.service.send({ receiver: small, message_type: 'request', content: 'work' }, ctx);
        await t.service.send({ receiver: large, message_type: 'request', content: 'work' }, ctx);
      }
      await until(() => deliveredTo(events, CLIENT).length >= 40, '40 executions');
      const replies = deliveredTo(events, CLIENT).slice(0, 40);
      const [fromSmall, fromLarge] = [small, large].map((id) => replies.filter((m) => m.sender === id).length);
      assert.deepEqual([fromSmall, fromLarge], [10, 30], 'three executions of large for each of small');
    } finally {
      await t.stop();
    }
  });
});
