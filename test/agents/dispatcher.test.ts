import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { encodeForAgent } from '../../src/agents/dispatcher.js';
import { completeMessage } from '../../src/bus/message.js';
import { encodeIncoming } from '../../src/sandbox/abi.js';

describe('dispatcher', () => {
  it('encodes a message for fd 0 exactly as the ABI does (encodeIncoming), non-ASCII included', () => {
    for (const content of ['hello', 'héllo wörld ✓ 🐝', { nested: ['a', 1, null] }, '']) {
      const message = completeMessage({ sender: 'client:x', receiver: 'a', message_type: 'inform', content, metadata: { traceparent: '00-abc' } });
      assert.deepEqual(new Uint8Array(encodeForAgent(message)), encodeIncoming(message));
    }
  });
});
