/**
 * Agents as principals (DESIGN.md section 9) on a real server: an agent's
 * sends are checked against its capabilities and the receiver's, a refused
 * send gets the sender a FIPA `failure` (`permission_denied`), and an agent
 * refused more than `max_failed_auth_attempts` times within
 * `failed_auth_window` is failed with reason `quarantined` and not restarted.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createSimulatedClock } from '../../supervisors/index.js';
import { isSvcError } from '../../src/errors/svc-error.js';
import { CLIENT, TEST_TIMEOUT_MS, ctx, deliveredTo, example, messages, startTestServer, transitions, until, type TestServer } from './agent-fixtures.js';

async function deployWith(t: TestServer, name: string, capabilities: string[], module = example('echo')): Promise<string> {
  const { agent_id } = await t.service.deploy({ name, wasm_module: module, capabilities, resources: { memory_limit: 0, cpu_shares: 0 } }, ctx);
  return agent_id;
}

const failuresTo = (events: Parameters<typeof messages>[0], agentId: string) =>
  messages(events, 'platform').filter((m) => m.receiver === agentId && m.message_type === 'failure');

describe('agents as principals: capabilities and quarantine', { timeout: TEST_TIMEOUT_MS }, () => {
  it('an agent without message:send is refused each send, told why, and quarantined after max_failed_auth_attempts + 1 refusals', async () => {
    const t = await startTestServer({ clock: createSimulatedClock(), overrides: { 'security.max_failed_auth_attempts': 2 } });
    try {
      const events = t.events();
      const mute = await deployWith(t, 'mute', ['message:receive']);
      for (let i = 0; i < 2; i++) {
        await t.service.send({ receiver: mute, message_type: 'request', content: `m${i}` }, ctx);
        await until(() => failuresTo(events, mute).length === i + 1, `failure ${i + 1}`);
      }
      const [failure] = failuresTo(events, mute);
      assert.equal(failure?.metadata?.['failure_reason'], 'permission_denied');
      assert.match(String(failure?.content), /message:send/);
      assert.equal(deliveredTo(events, CLIENT).length, 0, 'no reply reached the client');
      assert.ok(!transitions(events, mute).some((e) => e.to === 'failed'), 'two refusals are within the limit');
      await t.service.send({ receiver: mute, message_type: 'request', content: 'm2' }, ctx);
      await until(() => transitions(events, mute).some((e) => e.to === 'failed'), 'the quarantine');
      const fail = transitions(events, mute).find((e) => e.to === 'failed');
      assert.equal(fail?.reason, 'quarantined');
      assert.ok(!transitions(events, mute).some((e) => e.to === 'restarting'), 'a quarantined agent is not restarted');
      assert.equal((await t.service.get(mute, ctx)).state, 'failed');
      assert.ok(t.logs.some((l) => l.msg === 'agent quarantined: its sends kept being refused' && l.agent_id === mute));
      await assert.rejects(t.service.send({ receiver: mute, message_type: 'request', content: 'late' }, ctx), (error: unknown) => isSvcError(error) && error.metadata['reason'] === 'agent_failed');
    } finally {
      await t.stop();
    }
  });

  it('a receiver without message:receive refuses an agent\'s send; agents that name no capability hold both', async () => {
    const t = await startTestServer({ clock: createSimulatedClock() });
    try {
      const events = t.events();
      const deaf = await deployWith(t, 'deaf', ['message:send'], example('pong'));
      const ping = await deployWith(t, 'ping', []);
      const pinger = await deployWith(t, 'pinger', [], example('ping'));
      await t.service.send({ receiver: pinger, message_type: 'request', content: `start:${deaf}:1` }, ctx);
      await until(() => failuresTo(events, pinger).length === 1, 'the failure of the ping');
      assert.equal(failuresTo(events, pinger)[0]?.metadata?.['failure_reason'], 'permission_denied');
      assert.match(String(failuresTo(events, pinger)[0]?.content), new RegExp(`${deaf} lacks message:receive`));
      assert.equal(deliveredTo(events, deaf).length, 0, 'nothing reached the deaf agent');
      // No capability named: both held, and the reply comes back.
      const { message_id } = await t.service.send({ receiver: ping, message_type: 'request', content: 'hello' }, ctx);
      const reply = await until(() => deliveredTo(events, CLIENT).find((m) => m.in_reply_to === message_id), 'the reply');
      assert.equal(reply.content, 'hello');
    } finally {
      await t.stop();
    }
  });

  it('with auto_quarantine_suspicious_agents off, refused sends are refused but never quarantine', async () => {
    const t = await startTestServer({ clock: createSimulatedClock(), overrides: { 'security.max_failed_auth_attempts': 1, 'security.auto_quarantine_suspicious_agents': 'false' } });
    try {
      const events = t.events();
      const mute = await deployWith(t, 'mute', ['message:receive']);
      for (let i = 0; i < 4; i++) {
        await t.service.send({ receiver: mute, message_type: 'request', content: `m${i}` }, ctx);
        await until(() => failuresTo(events, mute).length === i + 1, `failure ${i + 1}`);
      }
      assert.ok(!transitions(events, mute).some((e) => e.to === 'failed'));
      assert.notEqual((await t.service.get(mute, ctx)).state, 'failed');
    } finally {
      await t.stop();
    }
  });
});
