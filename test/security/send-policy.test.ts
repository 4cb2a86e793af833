import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSimulatedClock } from '../../supervisors/clock-simulated.js';
import { agentHolds, createSendPolicy, type AgentSend } from '../../src/security/send-policy.js';

const send = (senderCapabilities: string[], receiverCapabilities: string[] | undefined = []): AgentSend => ({ sender: 'a1', senderCapabilities, receiver: 'a2', receiverCapabilities });

test('an agent that names neither message permission holds both; one that names one holds only it', () => {
  const table: Array<[string[], boolean, boolean]> = [
    [[], true, true],
    [['echo', 'search'], true, true],
    [['message:send'], true, false],
    [['message:receive', 'echo'], false, true],
    [['message:send', 'message:receive'], true, true],
  ];
  for (const [capabilities, sends, receives] of table) {
    assert.equal(agentHolds(capabilities, 'message:send'), sends, capabilities.join(','));
    assert.equal(agentHolds(capabilities, 'message:receive'), receives, capabilities.join(','));
  }
});

test('a send is checked against the sender\'s message:send and the receiving agent\'s message:receive', () => {
  const policy = createSendPolicy({ maxRefusals: 3, windowMs: 300_000, autoQuarantine: true, clock: createSimulatedClock() });
  assert.deepEqual(policy.check(send([])), { allowed: true });
  assert.deepEqual(policy.check(send([], undefined)), { allowed: true }, 'to a client or the platform');
  assert.deepEqual(policy.check(send(['message:receive'])), { allowed: false, permission: 'message:send', agentId: 'a1', quarantine: false });
  assert.deepEqual(policy.check(send([], ['message:send'])), { allowed: false, permission: 'message:receive', agentId: 'a2', quarantine: false });
});

test('more than max refusals within the window quarantines the sender, once', () => {
  const clock = createSimulatedClock();
  const policy = createSendPolicy({ maxRefusals: 3, windowMs: 300_000, autoQuarantine: true, clock });
  const refused = (): boolean => {
    const decision = policy.check(send(['message:receive']));
    return decision.allowed ? assert.fail('allowed') : decision.quarantine;
  };
  assert.deepEqual([refused(), refused(), refused()], [false, false, false]);
  assert.equal(refused(), true, 'the fourth refusal');
  assert.equal(refused(), false, 'quarantined once');
  policy.forget('a1');
  assert.equal(policy.refused('a1'), false);
});

test('refusals older than the window do not count; refusals from elsewhere (rate, mailbox) do', () => {
  const clock = createSimulatedClock();
  const policy = createSendPolicy({ maxRefusals: 2, windowMs: 1_000, autoQuarantine: true, clock });
  assert.equal(policy.refused('a1'), false);
  assert.equal(policy.refused('a1'), false);
  clock.increment(1_000);
  assert.equal(policy.refused('a1'), false, 'the first two left the window');
  assert.equal(policy.refused('a1'), false);
  assert.equal(policy.refused('a1'), true);
});

test('with auto_quarantine_suspicious_agents off nobody is quarantined, refusals still refuse', () => {
  const policy = createSendPolicy({ maxRefusals: 1, windowMs: 1_000, autoQuarantine: false, clock: createSimulatedClock() });
  for (let i = 0; i < 5; i++) assert.deepEqual(policy.check(send(['message:receive'])), { allowed: false, permission: 'message:send', agentId: 'a1', quarantine: false });
});
