import assert from 'node:assert/strict';
import { test } from 'node:test';
import { completeMessage } from '../../src/bus/message.js';
import { createIdGenerator } from '../../src/bus/message-id.js';
import { MESSAGE_OVERHEAD_BYTES, messageBytes } from '../../src/bus/message-size.js';

const newId = createIdGenerator();

const base = { sender: 'client:a', receiver: 'agent-1', message_type: 'inform' as const };

test('a message counts its overhead, its ids and every character of its content', () => {
  const empty = completeMessage({ ...base, conversation_id: 'c' }, { newId });
  const small = messageBytes(empty);
  assert.ok(small >= MESSAGE_OVERHEAD_BYTES + 'client:a'.length + 'agent-1'.length + 1);
  const mib = completeMessage({ ...base, conversation_id: 'c', content: 'x'.repeat(1024 * 1024) }, { newId });
  assert.equal(messageBytes(mib) - small, 1024 * 1024);
});

test('structured content counts its keys, strings and members; the figure is kept for the same message', () => {
  const flat = completeMessage({ ...base, conversation_id: 'c', content: { text: 'y'.repeat(1000) } }, { newId });
  const nested = completeMessage({ ...base, conversation_id: 'c', content: { list: Array.from({ length: 100 }, () => ({ text: 'y'.repeat(1000) })) } }, { newId });
  assert.ok(messageBytes(flat) > 1000);
  assert.ok(messageBytes(nested) > 100 * 1000);
  assert.equal(messageBytes(nested), messageBytes(nested));
});
