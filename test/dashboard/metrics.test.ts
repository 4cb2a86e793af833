/**
 * The charts' figures (dashboard/lib/metrics.js): counter rates with resets,
 * histogram quantiles as Prometheus computes them, and a real server's
 * metrics polled around real traffic.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bucketIncrease, createMetricHistory, increase, pointBetween, quantile, sumOf, throttledByAgent } from '../../dashboard/lib/metrics.js';
import type { MetricSample } from '../../dashboard/lib/types.js';
import { call, deployEcho, eventually, startGateway, type Gateway } from '../api/http/http-fixtures.js';

const INF = Infinity;

function histogram(name: string, buckets: Array<[number, number]>, sum: number): MetricSample[] {
  return [
    ...buckets.map(([le, value]) => ({ name: `${name}_bucket`, labels: { le: le === INF ? '+Inf' : String(le) }, value })),
    { name: `${name}_sum`, value: sum },
    { name: `${name}_count`, value: buckets.at(-1)?.[1] ?? 0 },
  ];
}

describe('quantile (histogram_quantile)', () => {
  const buckets: Array<[number, number]> = [
    [0.1, 10],
    [0.5, 60],
    [1, 90],
    [INF, 100],
  ];
  const table: Array<[number, Array<[number, number]>, number | null]> = [
    [0.5, buckets, 0.1 + (0.4 * (50 - 10)) / 50],
    [0.05, buckets, 0.05],
    [0.1, buckets, 0.1],
    [0.9, buckets, 1],
    [0.95, buckets, 1], // in +Inf: the highest finite bound
    [0.95, [[1, 0], [INF, 0]], null],
    [0.5, [], null],
    [0.5, [[0.25, 4], [INF, 4]], 0.125],
  ];
  for (const [q, b, expected] of table) {
    it(`q=${q} of ${JSON.stringify(b)} → ${expected}`, () => {
      const got = quantile(q, b);
      if (expected === null) assert.equal(got, null);
      else assert.ok(got !== null && Math.abs(got - expected) < 1e-12, `${got} ≠ ${expected}`);
    });
  }
});

describe('rates between polls', () => {
  it('a counter that went down was reset: its increase is its new value', () => {
    assert.deepEqual([increase(5, 9), increase(9, 9), increase(9, 4)], [4, 0, 4]);
    assert.deepEqual(bucketIncrease([[1, 5], [INF, 8]], [[1, 7], [INF, 12]]), [[1, 2], [INF, 4]]);
    assert.deepEqual(bucketIncrease([[1, 5], [INF, 8]], [[1, 1], [INF, 2]]), [[1, 1], [INF, 2]]);
  });

  it('sums series over their labels, or only those carrying the labels asked', () => {
    const samples: MetricSample[] = [
      { name: 'x', labels: { status: 'success' }, value: 3 },
      { name: 'x', labels: { status: 'error' }, value: 2 },
      { name: 'y', value: 10 },
    ];
    assert.deepEqual([sumOf(samples, 'x'), sumOf(samples, 'x', { status: 'error' }), sumOf(samples, 'z')], [5, 2, 0]);
  });

  it('one point: per-second rates, latency from the histograms, memory gauges; null where nothing was measured', () => {
    const before: MetricSample[] = [
      { name: 'svc_messages_sent_total', labels: { message_type: 'request' }, value: 10 },
      { name: 'svc_agent_executions_total', labels: { status: 'success' }, value: 4 },
      ...histogram('svc_message_processing_duration_seconds', [[0.001, 2], [0.01, 4], [INF, 4]], 0.01),
    ];
    const after: MetricSample[] = [
      { name: 'svc_messages_sent_total', labels: { message_type: 'request' }, value: 20 },
      { name: 'svc_messages_sent_total', labels: { message_type: 'inform' }, value: 10 },
      { name: 'svc_messages_received_total', labels: { message_type: 'request' }, value: 10 },
      { name: 'svc_agent_executions_total', labels: { status: 'success' }, value: 14 },
      { name: 'svc_agent_executions_total', labels: { status: 'error' }, value: 2 },
      { name: 'svc_message_errors_total', labels: { message_type: 'request' }, value: 2 },
      ...histogram('svc_message_processing_duration_seconds', [[0.001, 2], [0.01, 14], [INF, 14]], 0.06),
      { name: 'svc_runtime_memory_usage_bytes', value: 1000 },
      { name: 'svc_wasm_memory_usage_bytes', labels: { agent_id: 'a' }, value: 64 },
      { name: 'svc_wasm_memory_usage_bytes', labels: { agent_id: 'b' }, value: 128 },
    ];
    const p = pointBetween(before, after, 2, 100);
    assert.deepEqual(
      { t: p.t, sent: p.sent, received: p.received, executions: p.executions, executionErrors: p.executionErrors, messageErrors: p.messageErrors, restarts: p.restarts },
      { t: 100, sent: 10, received: 5, executions: 5, executionErrors: 1, messageErrors: 1, restarts: null },
    );
    assert.ok(p.latencyMean !== null && Math.abs(p.latencyMean - 5) < 1e-9, String(p.latencyMean)); // 0.05 s over 10 messages
    assert.ok(p.latencyP95 !== null && Math.abs(p.latencyP95 - (1 + (9 * 9.5) / 10)) < 1e-9, String(p.latencyP95)); // all 10 in (1 ms, 10 ms]
    assert.equal(p.executionP95, null);
    assert.deepEqual([p.processMemory, p.agentMemory], [1000, 192]);
  });

  it('counts restarts where the server has the metric', () => {
    const p = pointBetween([{ name: 'svc_agent_restarts_total', value: 1 }], [{ name: 'svc_agent_restarts_total', value: 3 }], 1, 1);
    assert.equal(p.restarts, 2);
  });

  it('throttled seconds by agent, where the server counts them', () => {
    const seconds = throttledByAgent([
      { name: 'svc_agent_throttled_seconds_total', labels: { agent_id: 'a' }, value: 1.5 },
      { name: 'svc_agent_throttled_seconds_total', labels: { agent_id: 'b' }, value: 0 },
      { name: 'svc_agent_throttled_seconds_total', value: 9 },
    ]);
    assert.deepEqual([...seconds], [['a', 1.5], ['b', 0]]);
  });

  it('the history keeps its last points, and needs two polls for the first', () => {
    const history = createMetricHistory(3);
    for (let t = 0; t < 6; t++) history.push([{ name: 'svc_messages_sent_total', value: t * 10 }], t);
    assert.deepEqual(history.points().map((p) => [p.t, p.sent]), [[3, 10], [4, 10], [5, 10]]);
    history.push([], 5); // a poll at the same instant adds nothing
    assert.equal(history.points().length, 3);
    assert.deepEqual(history.latest(), []);
  });
});

describe('the figures of a real server', () => {
  let gw: Gateway;
  before(async () => {
    gw = await startGateway();
  });
  after(() => gw.stop());

  it('shows the messages sent and handled between two polls', async () => {
    const id = await deployEcho(gw.base, 'echo-metrics');
    const poll = async (): Promise<MetricSample[]> => (await call(gw.base, 'GET', '/api/v1/metrics')).body.samples as MetricSample[];
    const history = createMetricHistory();
    history.push(await poll(), 1);
    for (let i = 0; i < 5; i++) assert.equal((await call(gw.base, 'POST', `/api/v1/agents/${id}/messages`, { message_type: 'request', content: `m${i}` })).status, 202);
    // The echo's replies are sent too; wait until all five are handled and answered.
    const handled = await eventually(async () => {
      const samples = await poll();
      return sumOf(samples, 'svc_messages_received_total') >= 5 && sumOf(samples, 'svc_messages_sent_total') >= 10 ? samples : undefined;
    });
    history.push(handled, 2);
    const p = history.points()[0];
    assert.ok(p);
    assert.equal(p.sent, 10);
    assert.equal(p.received, 5);
    assert.equal(p.executions, 5);
    assert.ok(p.latencyMean !== null && p.latencyMean > 0);
    assert.ok(p.latencyP95 !== null && p.latencyP95 > 0);
    assert.ok(p.processMemory > 0 && p.agentMemory > 0);
  });
});
