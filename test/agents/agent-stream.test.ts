import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Subject } from 'rxjs';
import { followAgent, RECENT_MESSAGE_IDS } from '../../src/agents/agent-stream.js';
import type { BusEvent, MessageDirection } from '../../src/bus/events.js';
import { completeMessage } from '../../src/bus/message.js';

const message = (id: string, direction: MessageDirection = 'sent', type: 'request' | 'inform' = 'request'): BusEvent => ({
  kind: 'message',
  direction,
  message: { ...completeMessage({ sender: 'client:x', receiver: 'agent-1', message_type: type, content: id }, { newId: () => id }) },
});

function follow(hostedHere: () => boolean, filter = {}) {
  const local = new Subject<BusEvent>();
  const remote = new Subject<BusEvent>();
  const seen: string[] = [];
  let failed: unknown;
  let completed = false;
  const subscription = local.pipe(followAgent(remote, hostedHere, { agent_id: 'agent-1', ...filter })).subscribe({
    next: (e) => seen.push(e.kind === 'message' ? `${e.direction} ${e.message.message_id}` : `lifecycle ${e.to}`),
    error: (e: unknown) => (failed = e),
    complete: () => (completed = true),
  });
  return { local, remote, seen, subscription, failed: () => failed, completed: () => completed };
}

describe('followAgent: a stream of an agent wherever it runs', () => {
  it('takes the owner\'s events while another node hosts the agent, and drops this node\'s own copies', () => {
    const s = follow(() => false);
    s.local.next(message('m1'));
    s.remote.next(message('m1'));
    s.remote.next(message('m1', 'delivered'));
    s.remote.next({ kind: 'lifecycle', agent_id: 'agent-1', from: 'running', to: 'executing', reason: 'message', at: 'now' });
    assert.deepEqual(s.seen, ['sent m1', 'delivered m1', 'lifecycle executing']);
  });

  it('takes this node\'s events while it hosts the agent; a message that comes both ways while the agent moves is passed once per direction', () => {
    let here = true;
    const s = follow(() => here);
    s.local.next(message('m1'));
    s.remote.next(message('m1'));
    here = false;
    s.local.next(message('m2'));
    s.remote.next(message('m2'));
    assert.deepEqual(s.seen, ['sent m1', 'sent m2']);
  });

  it('filters the owner\'s events by the stream\'s message_types and agent', () => {
    const s = follow(() => false, { message_types: ['inform'] });
    s.remote.next(message('m1'));
    s.remote.next(message('m2', 'sent', 'inform'));
    const other = message('m3', 'sent', 'inform');
    if (other.kind === 'message') other.message.receiver = 'agent-2';
    s.remote.next(other);
    assert.deepEqual(s.seen, ['sent m2']);
  });

  it('forgets the oldest ids past its bound, and ends with either source\'s error', () => {
    const s = follow(() => true);
    for (let i = 0; i <= RECENT_MESSAGE_IDS; i++) s.local.next(message(`m${i}`));
    s.local.next(message('m0'));
    assert.equal(s.seen.length, RECENT_MESSAGE_IDS + 2, 'm0 was forgotten, so its late copy passes');
    const failure = new Error('slow');
    s.remote.error(failure);
    assert.equal(s.failed(), failure);
  });

  it('completes with this node\'s bus, and lets both sources go when unsubscribed', () => {
    const s = follow(() => false);
    s.local.complete();
    assert.equal(s.completed(), true);
    const t = follow(() => false);
    t.subscription.unsubscribe();
    assert.equal(t.local.observed, false);
    assert.equal(t.remote.observed, false);
  });
});
