import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createSimulatedClock } from '../../supervisors/clock-simulated.js';
import type { RouteOutcome } from '../../src/agents/router.js';
import { completeMessage, type Message } from '../../src/bus/message.js';
import { createHandOverHold, HOLD_TIMEOUT_MS, MAX_HELD_MESSAGES } from '../../src/cluster/hand-over-hold.js';

let n = 0;
const message = (receiver = 'agent-1'): Message => completeMessage({ sender: 'client:x', receiver, message_type: 'request', content: String(n) }, { newId: () => `m${n++}` });

/** What the other node is sent, and answers `ok`. */
function newNode() {
  const sent: string[] = [];
  const send = async (m: Message): Promise<RouteOutcome> => {
    sent.push(m.message_id);
    return { ok: true };
  };
  return { sent, send };
}

describe('messages for an agent being handed over', () => {
  it('are held in order and go on to the new node once it acknowledged; later ones go straight there', async () => {
    const hold = createHandOverHold(createSimulatedClock());
    assert.equal(hold.holds('agent-1'), false);
    hold.begin('agent-1');
    assert.equal(hold.holds('agent-1'), true);
    assert.equal(hold.holds('agent-2'), false);
    const messages = [message(), message(), message()];
    const outcomes = messages.map((m) => hold.hold(m));
    const node = newNode();
    hold.release('agent-1', node.send);
    assert.deepEqual(await Promise.all(outcomes), [{ ok: true }, { ok: true }, { ok: true }]);
    const late = message();
    assert.deepEqual(await hold.hold(late), { ok: true });
    assert.deepEqual(node.sent, [...messages, late].map((m) => m.message_id));
  });

  it('refuses what finds the hold full (mailbox_full) and what waits past the timeout (unknown_receiver)', async () => {
    const clock = createSimulatedClock();
    const hold = createHandOverHold(clock);
    hold.begin('agent-1');
    const waiting = Array.from({ length: MAX_HELD_MESSAGES }, () => hold.hold(message()));
    const over = await hold.hold(message());
    assert.equal(over.ok, false);
    assert.equal(!over.ok && over.reason, 'mailbox_full');
    clock.increment(HOLD_TIMEOUT_MS - 1);
    let settled = 0;
    for (const w of waiting) void w.then(() => settled++);
    await Promise.resolve();
    assert.equal(settled, 0, 'nothing refused before the timeout');
    clock.increment(1);
    const outcomes = await Promise.all(waiting);
    assert.ok(outcomes.every((o) => !o.ok && o.reason === 'unknown_receiver' && /did not take it within/.test(o.detail ?? '')));
    const node = newNode();
    hold.release('agent-1', node.send);
    assert.deepEqual(node.sent, [], 'a refused message is not sent on later');
  });

  it('refuses every held message when the hand-over fails, and a message for a sender that failed to send on', async () => {
    const hold = createHandOverHold(createSimulatedClock());
    hold.begin('agent-1');
    const outcome = hold.hold(message());
    hold.refuse('agent-1', 'agent agent-1 could not be handed over to node n2');
    assert.deepEqual(await outcome, { ok: false, reason: 'unknown_receiver', detail: 'agent agent-1 could not be handed over to node n2' });
    assert.equal(hold.holds('agent-1'), false);
    assert.deepEqual(await hold.hold(message()), { ok: false, reason: 'unknown_receiver' });

    hold.begin('agent-3');
    const failing = hold.hold(message('agent-3'));
    hold.release('agent-3', () => Promise.reject(new Error('channel closed')));
    const failed = await failing;
    assert.equal(!failed.ok && failed.reason, 'unknown_receiver');
  });
});
