/** The page's messages (dashboard/lib/messages.js): once each, bounded, by agent, replies and the agent a failure is about. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createMessageStore } from '../../dashboard/lib/messages.js';
import type { Message } from '../../dashboard/lib/types.js';

let next = 0;
function message(fields: Partial<Message>): Message {
  next++;
  return { message_id: `01M${String(next).padStart(6, '0')}`, sender: 'client:x', receiver: 'a1', message_type: 'request', created_at: '2026-01-01T00:00:00.000Z', ...fields };
}

describe('message store', () => {
  it('keeps each message once, and the newest past its limit', () => {
    const store = createMessageStore(3);
    const first = message({});
    assert.equal(store.add(first), true);
    assert.equal(store.add({ ...first }), false);
    for (let i = 0; i < 3; i++) store.add(message({}));
    assert.equal(store.size, 3);
    assert.equal(store.get(first.message_id), undefined);
  });

  it('an agent: what it sent and received, and failures about messages to it, newest first', () => {
    const store = createMessageStore();
    const toA = message({ receiver: 'a1', content: 'crash' });
    const fromA = message({ sender: 'a1', receiver: 'client:x', message_type: 'inform' });
    const toB = message({ receiver: 'b1' });
    const failure = message({ sender: 'platform', receiver: 'client:x', message_type: 'failure', metadata: { failure_reason: 'execution_crashed', failed_message_id: toA.message_id } });
    const unknown = message({ sender: 'platform', receiver: 'client:x', message_type: 'failure', metadata: { failed_message_id: 'never-seen' } });
    for (const m of [toA, fromA, toB, failure, unknown]) store.add(m);
    assert.deepEqual(store.forAgent('a1', 10).map((m) => m.message_id), [failure.message_id, fromA.message_id, toA.message_id]);
    assert.deepEqual(store.forAgent('a1', 1).map((m) => m.message_id), [failure.message_id]);
    assert.equal(store.failureSubject(failure), 'a1');
    assert.equal(store.failureSubject(unknown), undefined);
    assert.equal(store.failureSubject(toA), undefined);
    // Only the platform speaks for a failed delivery.
    assert.equal(store.failureSubject({ ...failure, sender: 'a1' }), undefined);
  });

  it('the answer to a message sent with reply_with: the reply or the failure that carries it in in_reply_to', () => {
    const store = createMessageStore();
    store.add(message({ reply_with: 'r1' }));
    assert.equal(store.replyTo('r1'), undefined);
    const reply = message({ sender: 'a1', receiver: 'client:x', message_type: 'inform', in_reply_to: 'r1' });
    store.add(reply);
    assert.equal(store.replyTo('r1'), reply);
  });
});
