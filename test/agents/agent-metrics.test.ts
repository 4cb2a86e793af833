/**
 * The runtime and messaging `svc_*` metrics after a scripted workload on a
 * real server, read through `AgentService.metrics` (the figures of the
 * Metrics RPC and of the Prometheus listener): every count matches what was
 * done, and an undeployed agent leaves no series behind.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createSimulatedClock } from '../../supervisors/index.js';
import type { MetricSample } from '../../src/agents/agent-service-types.js';
import { INITIALIZE_TRAPS, burner, compile } from './agent-wat.js';
import { TEST_TIMEOUT_MS, ask, ctx, deploy, example, startTestServer, until, waitForState } from './agent-fixtures.js';

function valueOf(samples: MetricSample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = Object.entries(labels);
  const sample = samples.find((s) => s.name === name && Object.keys(s.labels).length === wanted.length && wanted.every(([k, v]) => s.labels[k] === v));
  return sample?.value;
}

describe('agent metrics', { timeout: TEST_TIMEOUT_MS }, () => {
  it('count deploys, executions, messages and errors, and drop an undeployed agent series', async () => {
    const clock = createSimulatedClock();
    const t = await startTestServer({ clock });
    try {
      const events = t.events();
      const echo = await deploy(t, example('echo'), 'echo');
      const crasher = await deploy(t, example('crasher'), 'crasher');
      await assert.rejects(deploy(t, await compile(INITIALIZE_TRAPS), 'broken'));
      for (const word of ['a', 'b', 'c']) assert.equal((await ask(t, events, echo, word)).content, word);
      assert.equal((await ask(t, events, crasher, 'crash')).message_type, 'failure');
      await waitForState(t, crasher, 'restarting');
      await clock.advance(100);
      await waitForState(t, crasher, 'running');
      // The per-message counts reach the registry once per turn of the event loop (metric-tally.ts).
      await new Promise((resolve) => setImmediate(resolve));

      let { samples } = await t.service.metrics(ctx);
      const at = (name: string, labels?: Record<string, string>) => valueOf(samples, name, labels);
      assert.equal(at('svc_agents_total'), 2, 'the failed deploy is not counted');
      assert.equal(at('svc_agents_active'), 2);
      assert.equal(at('svc_agent_executions_total', { status: 'success' }), 3);
      assert.equal(at('svc_agent_executions_total', { status: 'error' }), 1);
      assert.equal(at('svc_agent_execution_duration_seconds_count'), 4);
      assert.equal(at('svc_messages_sent_total', { message_type: 'request' }), 4);
      assert.equal(at('svc_messages_sent_total', { message_type: 'inform' }), 3);
      assert.equal(at('svc_messages_sent_total', { message_type: 'failure' }), undefined, "the platform's failure is not a sent message");
      assert.equal(at('svc_messages_received_total', { message_type: 'request' }), 4);
      assert.equal(at('svc_message_processing_duration_seconds_count'), 4);
      assert.equal(at('svc_message_errors_total', { message_type: 'request' }), 1);
      assert.equal(at('svc_message_queue_size'), 0);
      assert.ok(at('svc_wasm_memory_usage_bytes', { agent_id: echo })! > 0);
      assert.ok(at('svc_wasm_memory_usage_bytes', { agent_id: crasher })! > 0);
      assert.ok(at('svc_runtime_memory_usage_bytes')! > 0);
      const cpu = at('svc_runtime_cpu_usage_ratio')!;
      assert.ok(cpu >= 0 && cpu <= 1, String(cpu));

      await t.service.undeploy(echo, ctx);
      ({ samples } = await t.service.metrics(ctx));
      assert.equal(samples.filter((s) => s.labels['agent_id'] === echo).length, 0, 'no series of the undeployed agent');
      assert.ok(at('svc_wasm_memory_usage_bytes', { agent_id: crasher })! > 0);
      assert.equal(at('svc_agents_active'), 1);
      assert.equal(at('svc_agents_total'), 2, 'a counter of deploys, not of agents present');
    } finally {
      await t.stop();
    }
  });

  it('svc_message_queue_size and svc_message_queue_bytes count what waits in mailboxes', async () => {
    const t = await startTestServer({ clock: createSimulatedClock() });
    try {
      const busy = await deploy(t, await compile(burner(100_000_000)), 'busy');
      for (const content of ['first', 'second', 'third']) await t.service.send({ receiver: busy, message_type: 'request', content }, ctx);
      await waitForState(t, busy, 'executing');
      const { samples } = await t.service.metrics(ctx);
      assert.equal(valueOf(samples, 'svc_message_queue_size'), 2, 'one executing, two waiting');
      const bytes = valueOf(samples, 'svc_message_queue_bytes');
      assert.equal(bytes, t.host().queuedBytes(), 'the figure max_queued_bytes is checked against');
      assert.ok(bytes! > 2 * 'second'.length, `two messages with their fields, not ${bytes}`);
      await until(() => t.host().queuedMessages() === 0, 'the mailbox drained');
      assert.equal(valueOf((await t.service.metrics(ctx)).samples, 'svc_message_queue_bytes'), 0);
    } finally {
      await t.stop();
    }
  });
});
