/**
 * CPU fairness with real agents on one worker: `cpu_quota_per_agent` holds a
 * busy agent to its share of time while a light agent beside it keeps
 * answering, and under contention for execution slots agents get CPU in
 * proportion to their `cpu_shares`. Bounds are generous and ratios are used
 * where possible, so a loaded machine does not fail the test.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { burner, compile } from './agent-wat.js';
import { CLIENT, ask, ctx, deliveredTo, deploy, example, startTestServer, waitFor } from './agent-fixtures.js';

describe('CPU fairness', () => {
  it('a busy agent is held to cpu_quota_per_agent (delayed, not killed) and a light one keeps answering', async () => {
    const t = await startTestServer({
      overrides: { 'runtime.executor_workers': 1, 'runtime.cpu_quota_per_agent': '100m', 'runtime.fuel_per_execution': 10_000_000_000 },
    });
    try {
      const events = t.events();
      const heavy = await deploy(t, await compile(burner(10_000_000)), 'heavy');
      const light = await deploy(t, example('echo'), 'light');
      await ask(t, events, light, 'warm-up');
      for (let i = 0; i < 200; i++) await t.service.send({ receiver: heavy, message_type: 'request', content: `work ${i}` }, ctx);

      const runtime = t.host().get(heavy)!;
      const usedBefore = runtime.budget.usedNs;
      const started = performance.now();
      const latencies: number[] = [];
      while (performance.now() - started < 3_000) {
        const asked = performance.now();
        await ask(t, events, light, 'ping', 5_000);
        latencies.push(performance.now() - asked);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const elapsedMs = performance.now() - started;
      const heavyMs = (runtime.budget.usedNs - usedBefore) / 1e6;

      // 100m over ~3 s is ~300 ms, plus at most the 100 ms window's burst and one execution's overshoot.
      assert.ok(heavyMs / elapsedMs <= 0.25, `heavy used ${heavyMs.toFixed(0)} ms of ${elapsedMs.toFixed(0)} ms`);
      assert.ok(heavyMs > 0, 'heavy still ran');
      assert.ok(runtime.throttledCount > 0, 'heavy was held back');
      assert.equal((await t.service.get(heavy, ctx)).restart_count, 0, 'delayed, not killed');
      assert.ok(runtime.mailbox.length > 0, 'its backlog waits');
      latencies.sort((a, b) => a - b);
      const median = latencies[Math.floor(latencies.length / 2)]!;
      assert.ok(median < 250, `light median latency ${median.toFixed(1)} ms`);
      assert.ok(latencies.at(-1)! < 1_000, `light worst latency ${latencies.at(-1)!.toFixed(1)} ms`);
      assert.ok(t.host().stats().throttled > 0);
    } finally {
      await t.stop();
    }
  });

  it('agents contending for execution slots get CPU in proportion to their cpu_shares', async () => {
    const t = await startTestServer({
      overrides: { 'runtime.executor_workers': 1, 'runtime.max_concurrent_executions': 1, 'runtime.cpu_quota_per_agent': 0 },
    });
    try {
      const events = t.events();
      const module = await compile(burner(2_000_000));
      const small = await deploy(t, module, 'small', { memory_limit: 0, cpu_shares: 1024 });
      const large = await deploy(t, module, 'large', { memory_limit: 0, cpu_shares: 3072 });
      for (let i = 0; i < 100; i++) {
        await t.service.send({ receiver: small, message_type: 'request', content: 'work' }, ctx);
        await t.service.send({ receiver: large, message_type: 'request', content: 'work' }, ctx);
      }
      await waitFor(() => deliveredTo(events, CLIENT).length >= 80, '80 executions', 30_000);
      const replies = deliveredTo(events, CLIENT).slice(0, 80);
      const [fromSmall, fromLarge] = [small, large].map((id) => replies.filter((m) => m.sender === id).length) as [number, number];
      const ratio = fromLarge / fromSmall;
      assert.ok(ratio >= 2 && ratio <= 4.5, `large:small = ${fromLarge}:${fromSmall}`);
    } finally {
      await t.stop();
    }
  });
});
