import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLocalRouter, type Mailboxes } from '../../src/agents/router.js';
import { createMessageBus } from '../../src/bus/bus.js';
import type { BusEvent } from '../../src/bus/events.js';
import { completeMessage, type FailureReason, type Message } from '../../src/bus/message.js';
import { createIdGenerator } from '../../src/bus/message-id.js';

const newId = createIdGenerator();

/** `names`: name → id, for receivers named by name. */
function setUp(refusals: Record<string, FailureReason | null>, names: Record<string, string> = {}) {
  const bus = createMessageBus();
  const events: string[] = [];
  bus.subscribe().subscribe((e: BusEvent) => events.push(e.kind === 'message' ? `${e.direction}:${e.message.receiver}` : e.kind));
  const queued: Message[] = [];
  const mailboxes: Mailboxes = {
    refusal: (message) => refusals[names[message.receiver] ?? message.receiver],
    addressed: (receiver) => names[receiver] ?? receiver,
    enqueue: (message) => {
      events.push(`queued:${message.receiver}`);
      queued.push(message);
    },
  };
  return { router: createLocalRouter(bus, mailboxes), events, queued };
}

const to = (receiver: string) => completeMessage({ sender: 'agent-a', receiver, message_type: 'inform' }, { newId });

describe('local router', () => {
  it('queues for a local agent, publishing it as sent first', () => {
    const { router, events, queued } = setUp({ b: null });
    assert.deepEqual(router.route(to('b')), { ok: true });
    assert.deepEqual(events, ['sent:b', 'queued:b']);
    assert.equal(queued.length, 1);
  });

  it('delivers to a client by publishing: sent, then delivered', () => {
    const { router, events } = setUp({});
    assert.deepEqual(router.route(to('client:alice')), { ok: true });
    assert.deepEqual(events, ['sent:client:alice', 'delivered:client:alice']);
  });

  it('refuses without publishing: unknown receiver, failed agent, full mailbox', () => {
    const { router, events, queued } = setUp({ failed: 'agent_failed', full: 'mailbox_full' });
    assert.deepEqual(router.route(to('nobody')), { ok: false, reason: 'unknown_receiver' });
    assert.deepEqual(router.route(to('failed')), { ok: false, reason: 'agent_failed' });
    assert.deepEqual(router.route(to('full')), { ok: false, reason: 'mailbox_full' });
    assert.deepEqual(events, []);
    assert.equal(queued.length, 0);
  });

  it('a receiver named by its name is published and queued with the agent id', () => {
    const { router, events, queued } = setUp({ '01J9Z3K4TQ8W5V6X7Y8Z9A0B1C': null }, { echo: '01J9Z3K4TQ8W5V6X7Y8Z9A0B1C' });
    assert.deepEqual(router.route(to('echo')), { ok: true });
    assert.deepEqual(events, ['sent:01J9Z3K4TQ8W5V6X7Y8Z9A0B1C', 'queued:01J9Z3K4TQ8W5V6X7Y8Z9A0B1C']);
    assert.equal(queued[0]?.receiver, '01J9Z3K4TQ8W5V6X7Y8Z9A0B1C');
  });

  it('does not publish again a message already on the bus (a platform failure)', () => {
    const { router, events } = setUp({ b: null });
    router.route(to('b'), true);
    assert.deepEqual(events, ['queued:b']);
  });
});
