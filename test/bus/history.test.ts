import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createMessageBus } from '../../src/bus/bus.js';
import { createMessageHistory } from '../../src/bus/history.js';
import { completeMessage, type Message } from '../../src/bus/message.js';
import { createIdGenerator } from '../../src/bus/message-id.js';

const newId = createIdGenerator();

let counter = 0;
function msg(sender: string, receiver: string): Message {
  counter++;
  return completeMessage({ sender, receiver, message_type: 'inform', content: counter }, { newId });
}

test('each tracked agent keeps its last N messages, sent or received, oldest first', () => {
  const history = createMessageHistory({ perAgent: 3 });
  history.track('a');
  history.track('b');
  const messages = [msg('a', 'b'), msg('b', 'a'), msg('a', 'c'), msg('client:x', 'a'), msg('c', 'b')];
  for (const m of messages) history.record(m);
  assert.deepEqual(history.recent('a'), [messages[1], messages[2], messages[3]]);
  assert.deepEqual(history.recent('b'), [messages[0], messages[1], messages[4]]);
  assert.deepEqual(history.recent('a', 2), [messages[2], messages[3]]);
  assert.deepEqual(history.recent('c'), [], 'untracked agents keep nothing');
  assert.deepEqual(history.stats(), { agents: 2, messages: 6, bytes: history.stats().bytes, evictedAgents: 0 });
});

test('a message an agent sends itself is kept once', () => {
  const history = createMessageHistory();
  history.track('a');
  history.record(msg('a', 'a'));
  assert.equal(history.recent('a').length, 1);
});

test('forget drops an agent and its messages; track is idempotent', () => {
  const history = createMessageHistory({ perAgent: 2 });
  history.track('a');
  history.record(msg('a', 'z'));
  history.track('a');
  assert.equal(history.recent('a').length, 1);
  history.forget('a');
  history.forget('a');
  assert.deepEqual(history.recent('a'), []);
  assert.deepEqual(history.stats(), { agents: 0, messages: 0, bytes: 0, evictedAgents: 0 });
});

test('the total stays bounded: past maxAgents the oldest tracked agent is evicted', () => {
  const history = createMessageHistory({ perAgent: 5, maxAgents: 3 });
  for (const id of ['a', 'b', 'c']) history.track(id);
  for (let n = 0; n < 100; n++) for (const id of ['a', 'b', 'c']) history.record(msg(id, 'elsewhere'));
  assert.equal(history.stats().messages, 15);
  history.track('d');
  assert.deepEqual(history.stats(), { agents: 3, messages: 10, bytes: history.stats().bytes, evictedAgents: 1 });
  assert.deepEqual(history.recent('a'), []);
});

test('follow records each message once from the bus (sent and platform, not delivered)', () => {
  const bus = createMessageBus();
  const history = createMessageHistory();
  history.track('a');
  const subscription = history.follow(bus.subscribe({ agent_id: 'a' }));
  const m = msg('client:x', 'a');
  bus.publish({ kind: 'message', direction: 'sent', message: m });
  bus.publish({ kind: 'message', direction: 'delivered', message: m });
  bus.publish({ kind: 'lifecycle', agent_id: 'a', from: null, to: 'starting', reason: 'deploy', at: m.created_at });
  const failure = bus.reportFailure(msg('a', 'ghost'), 'unknown_receiver');
  assert.deepEqual(history.recent('a'), [m, failure]);
  subscription.unsubscribe();
  assert.equal(bus.stats().subscribers, 0);
});

test('bad sizes are refused', () => {
  assert.throws(() => createMessageHistory({ perAgent: 0 }), RangeError);
  assert.throws(() => createMessageHistory({ maxAgents: -1 }), RangeError);
});

test('each ring keeps at most bytesPerAgent bytes: the oldest go first, and a larger message is not kept (issue 41)', () => {
  const big = (n: number) => completeMessage({ sender: 'client:x', receiver: 'a', message_type: 'inform', content: String(n).repeat(1000) }, { newId });
  const history = createMessageHistory({ perAgent: 100, bytesPerAgent: 4000 });
  history.track('a');
  const sent = [big(1), big(2), big(3), big(4)];
  for (const m of sent) history.record(m);
  // About 1.5 KB each: two fit.
  assert.deepEqual(history.recent('a'), [sent[2], sent[3]]);
  assert.ok(history.stats().bytes <= 4000);
  history.record(completeMessage({ sender: 'client:x', receiver: 'a', message_type: 'inform', content: 'z'.repeat(5000) }, { newId }));
  assert.deepEqual(history.recent('a'), [sent[2], sent[3]], 'the oversized message left the ring alone');
  history.forget('a');
  assert.equal(history.stats().bytes, 0);
});

test('as a bus tap, the recorder keeps messages no subscription watches, once each', () => {
  const bus = createMessageBus();
  const history = createMessageHistory();
  history.track('a');
  bus.tap(history.recorder);
  const m = msg('client:x', 'a');
  bus.publishMessage('sent', m);
  bus.publishMessage('delivered', m);
  assert.equal(bus.stats().subscribers, 0);
  assert.deepEqual(history.recent('a'), [m]);
});
