import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { BusEvent } from '../../src/bus/events.js';
import { completeMessage } from '../../src/bus/message.js';
import { decodeWatchEvent, encodeWatchEvent } from '../../src/cluster/watch-event.js';

const message = completeMessage({ sender: 'client:x', receiver: 'agent-1', message_type: 'request', content: 'hi' }, { newId: () => 'id-1' });

describe('watch events on the wire', () => {
  it('round-trips messages of every direction and lifecycle transitions', () => {
    const events: BusEvent[] = [
      { kind: 'message', direction: 'sent', message },
      { kind: 'message', direction: 'delivered', message },
      { kind: 'message', direction: 'platform', message },
      { kind: 'lifecycle', agent_id: 'agent-1', from: null, to: 'starting', reason: 'deploy', at: '2026-01-01T00:00:00.000Z' },
      { kind: 'lifecycle', agent_id: 'agent-1', from: 'running', to: 'stopped', reason: 'undeploy', at: '2026-01-01T00:00:00.000Z' },
    ];
    for (const event of events) assert.deepEqual(decodeWatchEvent(encodeWatchEvent(event)), JSON.parse(JSON.stringify(event)));
  });

  it('refuses what no node of this version sends', () => {
    const sent = encodeWatchEvent({ kind: 'message', direction: 'sent', message });
    const cases = [
      { ...sent, direction: 'shouted' },
      { ...sent, message_json: '{' },
      { ...sent, message_json: JSON.stringify({ ...message, message_type: 'shout' }) },
      { direction: 'lifecycle', message_json: '', lifecycle_json: 'null' },
      { direction: 'lifecycle', message_json: '', lifecycle_json: JSON.stringify({ kind: 'lifecycle', agent_id: 'a', from: 3, to: 'x', reason: 'r', at: 't' }) },
      { direction: 'lifecycle', message_json: '', lifecycle_json: JSON.stringify({ kind: 'lifecycle', agent_id: '', from: null, to: 'x', reason: 'r', at: 't' }) },
    ];
    for (const proto of cases) assert.equal(decodeWatchEvent(proto), undefined, JSON.stringify(proto));
  });
});
