import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SvcError } from '../../src/errors/svc-error.js';
import { createMessageBus, DEFAULT_SUBSCRIBER_BUFFER } from '../../src/bus/bus.js';
import type { BusEvent, LifecycleEvent } from '../../src/bus/events.js';
import { completeMessage, PLATFORM_SENDER, type Message } from '../../src/bus/message.js';
import type { Performative } from '../../src/bus/performatives.js';
import { createIdGenerator } from '../../src/bus/message-id.js';

const newId = createIdGenerator();

function sent(sender: string, receiver: string, type: Performative = 'inform'): BusEvent {
  return { kind: 'message', direction: 'sent', message: completeMessage({ sender, receiver, message_type: type }, { newId }) };
}
function transition(agent: string, to: string): LifecycleEvent {
  return { kind: 'lifecycle', agent_id: agent, from: 'starting', to, reason: 'test', at: '2025-01-01T00:00:00.000Z' };
}
const never = () => new Promise<void>(() => undefined);

test('subscribers receive the events their filter matches, in publish order', () => {
  const bus = createMessageBus();
  const all: BusEvent[] = [];
  const agentA: BusEvent[] = [];
  const requests: BusEvent[] = [];
  bus.subscribe().subscribe((e) => all.push(e));
  bus.subscribe({ agent_id: 'a' }).subscribe((e) => agentA.push(e));
  bus.subscribe({ message_types: ['request'] }).subscribe((e) => requests.push(e));
  const events = [sent('a', 'b'), sent('c', 'a', 'request'), transition('a', 'running'), sent('c', 'd', 'request'), transition('d', 'running')];
  for (const e of events) bus.publish(e);
  assert.deepEqual(all, events);
  assert.deepEqual(agentA, [events[0], events[1], events[2]]);
  assert.deepEqual(requests, [events[1], events[3]]);
  assert.equal(all[0], events[0], 'the published object itself, not a copy');
});

test('unsubscribing releases the subscription', () => {
  const bus = createMessageBus();
  const got: BusEvent[] = [];
  const subscription = bus.subscribe().subscribe((e) => got.push(e));
  assert.equal(bus.stats().subscribers, 1);
  bus.publish(sent('a', 'b'));
  subscription.unsubscribe();
  bus.publish(sent('a', 'b'));
  assert.equal(got.length, 1);
  assert.equal(bus.stats().subscribers, 0);
});

test('a slow subscriber is dropped with RESOURCE_EXHAUSTED while a fast one keeps receiving', async () => {
  const bus = createMessageBus({ subscriberBufferSize: 8 });
  const fast: BusEvent[] = [];
  const slow = bus.connect({}, never);
  const quick = bus.connect({}, (e) => void fast.push(e));
  for (let n = 0; n < 100; n++) bus.publish(sent('a', 'b'));
  assert.equal(fast.length, 100);
  assert.ok(slow.closed && !quick.closed);
  await assert.rejects(slow.done, (error: unknown) => {
    assert.ok(error instanceof SvcError);
    assert.equal(error.code, 'RESOURCE_EXHAUSTED');
    assert.equal(error.metadata['reason'], 'slow_consumer');
    assert.equal(error.metadata['dropped'], '9', '8 queued and the one that did not fit');
    assert.equal(error.metadata['buffer_size'], '8');
    return true;
  });
  const stats = bus.stats();
  assert.equal(stats.slowConsumers, 1);
  assert.equal(stats.droppedEvents, 9);
  assert.equal(stats.subscribers, 1, 'the slow one is released, the fast one stays');
  quick.close();
  assert.equal(bus.stats().subscribers, 0);
});

test('memory stays bounded: 100,000 events to a stalled subscriber never queue past its buffer', () => {
  const bus = createMessageBus();
  const stalled = bus.connect({}, never);
  const sample = sent('a', 'b');
  let most = 0;
  for (let n = 0; n < 100_000; n++) {
    bus.publish(sample);
    if (stalled.buffered > most) most = stalled.buffered;
  }
  assert.equal(most, DEFAULT_SUBSCRIBER_BUFFER);
  assert.equal(stalled.highWater, DEFAULT_SUBSCRIBER_BUFFER);
  assert.equal(stalled.buffered, 0, 'the queue is dropped with the subscriber');
  assert.equal(bus.stats().subscribers, 0);
});

test('connect honours the filter and a per-connection buffer size', async () => {
  const bus = createMessageBus();
  const got: BusEvent[] = [];
  const sink = bus.connect({ agent_id: 'b', message_types: ['cfp'] }, (e) => void got.push(e), { bufferSize: 2 });
  bus.publish(sent('a', 'b', 'cfp'));
  bus.publish(sent('a', 'b', 'inform'));
  bus.publish(transition('b', 'running'));
  assert.equal(got.length, 1);
  const tiny = bus.connect({}, never, { bufferSize: 2 });
  for (let n = 0; n < 4; n++) bus.publish(sent('x', 'y'));
  await assert.rejects(tiny.done, /fell more than 2 events behind/);
  sink.close();
});

test('reportFailure counts, publishes the platform failure and returns it for delivery', () => {
  const bus = createMessageBus({ newId: () => 'f-1', now: () => 0 });
  const platform: BusEvent[] = [];
  bus.subscribe({ agent_id: 'a', message_types: ['failure'] }).subscribe((e) => platform.push(e));
  const original: Message = completeMessage({ sender: 'a', receiver: 'ghost', message_type: 'request' }, { newId });
  const failure = bus.reportFailure(original, 'unknown_receiver');
  assert.ok(failure);
  assert.equal(failure.sender, PLATFORM_SENDER);
  assert.equal(failure.receiver, 'a');
  assert.equal(failure.message_id, 'f-1');
  assert.deepEqual(platform, [{ kind: 'message', direction: 'platform', message: failure }]);

  const crashed = bus.reportFailure(original, 'execution_crashed', 'trap');
  assert.equal(crashed?.content, 'execution crashed: trap');
  assert.equal(bus.reportFailure(failure, 'unknown_receiver'), undefined, 'a failure is not answered');
  const stats = bus.stats();
  assert.deepEqual(stats.failures, { unknown_receiver: 2, agent_failed: 0, mailbox_full: 0, memory_pressure: 0, execution_crashed: 1, permission_denied: 0 });
  assert.equal(stats.failureReplies, 2);
});

test('stats count events by kind', () => {
  const bus = createMessageBus();
  bus.publish(sent('a', 'b'));
  bus.publish(transition('a', 'running'));
  bus.publish(sent('a', 'b'));
  const { published, messages, lifecycle } = bus.stats();
  assert.deepEqual({ published, messages, lifecycle }, { published: 3, messages: 2, lifecycle: 1 });
});

test('close completes every subscription and ignores later publishes', async () => {
  const bus = createMessageBus();
  let completed = false;
  bus.subscribe().subscribe({ complete: () => (completed = true) });
  const sink = bus.connect({}, () => undefined);
  bus.close();
  assert.ok(completed);
  await sink.done;
  bus.publish(sent('a', 'b'));
  assert.equal(bus.stats().published, 0);
  assert.equal(bus.stats().subscribers, 0);
});

test('a subscriber that throws does not stop the publisher or the other subscribers', async () => {
  const bus = createMessageBus();
  const got: BusEvent[] = [];
  const reported: unknown[] = [];
  // RxJS reports an observer's throw on a later tick; capture it instead of crashing the test.
  const { config } = await import('rxjs');
  const previous = config.onUnhandledError;
  let bothReported!: () => void;
  const reportedTwice = new Promise<void>((resolve) => (bothReported = resolve));
  config.onUnhandledError = (error) => {
    if (reported.push(error) === 2) bothReported();
  };
  try {
    bus.subscribe().subscribe(() => {
      throw new Error('bad observer');
    });
    bus.subscribe().subscribe((e) => got.push(e));
    bus.publish(sent('a', 'b'));
    bus.publish(sent('a', 'b'));
    assert.equal(got.length, 2);
    // RxJS reports an observer's error on a later timer turn: wait for the reports, not for a while.
    await reportedTwice;
    assert.equal(reported.length, 2);
  } finally {
    config.onUnhandledError = previous;
  }
});

test('a message no subscription watches is counted and tapped, not fanned out; watching an agent or every agent brings its messages back', () => {
  const bus = createMessageBus();
  const tapped: Array<[string, string]> = [];
  const untap = bus.tap((direction, message) => tapped.push([direction, message.receiver]));
  const watchingA: BusEvent[] = [];
  const subscription = bus.subscribe({ agent_id: 'a' }).subscribe((e) => watchingA.push(e));
  const toA = sent('x', 'a');
  const toB = sent('x', 'b');
  assert.ok(toA.kind === 'message' && toB.kind === 'message');
  bus.publish(toA);
  bus.publishMessage('delivered', toB.message);
  assert.deepEqual(watchingA, [toA]);
  assert.deepEqual(tapped, [['sent', 'a'], ['delivered', 'b']]);
  assert.equal(bus.stats().messages, 2, 'the unwatched message is counted all the same');

  const everything: BusEvent[] = [];
  const all = bus.subscribe({ message_types: ['inform'] }).subscribe((e) => everything.push(e));
  bus.publishMessage('delivered', toB.message);
  assert.deepEqual(everything, [{ kind: 'message', direction: 'delivered', message: toB.message }], 'a subscription by type alone takes every agent');
  assert.equal(watchingA.length, 1);
  all.unsubscribe();
  subscription.unsubscribe();
  untap();
  bus.publish(toA);
  assert.equal(tapped.length, 3, 'an untapped listener hears nothing more');
  assert.equal(bus.stats().messages, 4);
});

test('a platform failure is tapped and reaches the subscriptions watching its receiver', () => {
  const bus = createMessageBus();
  const tapped: string[] = [];
  bus.tap((direction) => tapped.push(direction));
  const watching: BusEvent[] = [];
  bus.subscribe({ agent_id: 'a' }).subscribe((e) => watching.push(e));
  const original = completeMessage({ sender: 'a', receiver: 'ghost', message_type: 'request' }, { newId });
  const failure = bus.reportFailure(original, 'unknown_receiver');
  assert.deepEqual(tapped, ['platform']);
  assert.deepEqual(watching, [{ kind: 'message', direction: 'platform', message: failure }]);
});

test('a platform failure about a message to a watched agent reaches that agent\'s subscriptions, though neither its sender nor its receiver is watched (issue 41)', () => {
  const bus = createMessageBus();
  const watching: BusEvent[] = [];
  bus.subscribe({ agent_id: 'crashed' }).subscribe((e) => watching.push(e));
  const original = completeMessage({ sender: 'client:alice', receiver: 'crashed', message_type: 'request' }, { newId });
  const failure = bus.reportFailure(original, 'execution_crashed');
  assert.ok(failure !== undefined);
  assert.deepEqual(watching, [{ kind: 'message', direction: 'platform', message: failure }]);
  const elsewhere = bus.reportFailure(completeMessage({ sender: 'client:alice', receiver: 'other', message_type: 'request' }, { newId }), 'mailbox_full');
  assert.ok(elsewhere !== undefined);
  assert.equal(watching.length, 1, 'a failure about another agent is not fanned out');
});
