import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSimulatedClock } from '../../supervisors/index.js';
import { AGENT_LOG_DROPPED_MSG, AGENT_LOG_MSG, createAgentLogLimiter } from '../../src/telemetry/agent-log-limiter.js';
import { capturedLogger } from './telemetry-fixtures.js';

function setup() {
  const clock = createSimulatedClock();
  const { log, capture } = capturedLogger({ level: 'info' });
  const limiter = createAgentLogLimiter(log, { clock, linesPerSecond: 2, burst: 3, summaryIntervalMs: 10_000, maxLineChars: 12 });
  const lines = (msg: string) => capture.records().filter((r) => r.msg === msg);
  return { clock, limiter, lines };
}

test('a chatty agent is cut at its burst, then its rate; one summary line counts the drops', () => {
  const { clock, limiter, lines } = setup();
  const written = Array.from({ length: 10 }, (_, i) => limiter.write('a1', `line ${i}`));
  assert.deepEqual(written, [true, true, true, false, false, false, false, false, false, false]);
  clock.increment(500);
  assert.equal(limiter.write('a1', 'after a refill'), true);
  assert.deepEqual(lines(AGENT_LOG_MSG).map((r) => [r.agent_id, r.line]), [['a1', 'line 0'], ['a1', 'line 1'], ['a1', 'line 2'], ['a1', 'after a refi']]);
  assert.equal(lines(AGENT_LOG_MSG)[3]?.truncated, true);
  assert.equal(lines(AGENT_LOG_DROPPED_MSG).length, 0, 'the summary waits for its interval');
  clock.increment(10_000);
  const [summary] = lines(AGENT_LOG_DROPPED_MSG);
  assert.equal(summary?.agent_id, 'a1');
  assert.equal(summary?.dropped, 7);
  assert.equal(summary?.level, 40);
  clock.increment(60_000);
  assert.equal(lines(AGENT_LOG_DROPPED_MSG).length, 1, 'no summary without drops');
});

test('each agent has its own bucket', () => {
  const { limiter, lines } = setup();
  for (let i = 0; i < 5; i++) limiter.write('noisy', 'x');
  assert.equal(limiter.write('quiet', 'still heard'), true);
  assert.deepEqual(lines(AGENT_LOG_MSG).filter((r) => r.agent_id === 'quiet').map((r) => r.line), ['still heard']);
});

test('forget and flush write pending summaries at once and cancel their timers', () => {
  const { clock, limiter, lines } = setup();
  for (let i = 0; i < 5; i++) limiter.write('a1', 'x');
  for (let i = 0; i < 4; i++) limiter.write('a2', 'x');
  limiter.forget('a1');
  assert.deepEqual(lines(AGENT_LOG_DROPPED_MSG).map((r) => [r.agent_id, r.dropped]), [['a1', 2]]);
  limiter.flush();
  assert.deepEqual(lines(AGENT_LOG_DROPPED_MSG).map((r) => [r.agent_id, r.dropped]), [['a1', 2], ['a2', 1]]);
  assert.equal(clock.pendingTimers(), 0);
  assert.equal(limiter.write('a1', 'a new bucket after forget'), true);
});
