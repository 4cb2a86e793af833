import { test } from 'node:test';
import assert from 'node:assert/strict';
import { completeMessage } from '../../src/bus/message.js';
import { PERFORMATIVES, encodeIncoming, isPerformative, parseOutput, type IncomingMessage } from '../../src/sandbox/abi.js';
import { createIdGenerator } from '../../src/bus/message-id.js';

const newId = createIdGenerator();

const incoming: IncomingMessage = {
  message_id: 'm-1',
  sender: 'client:alice',
  receiver: 'agent-a',
  message_type: 'request',
  content: { task: 'x' },
  conversation_id: 'c-1',
};

test('the 22 FIPA performatives, and nothing else', () => {
  assert.equal(PERFORMATIVES.length, 22);
  assert.equal(new Set(PERFORMATIVES).size, 22);
  for (const p of ['accept-proposal', 'cfp', 'inform-ref', 'not-understood', 'request-whenever', 'subscribe']) assert.ok(isPerformative(p), p);
  for (const p of ['INFORM', 'inform ', 'hello', '', 42, null]) assert.ok(!isPerformative(p), String(p));
});

test('encodeIncoming is the Message JSON as one document, no newline', () => {
  const bytes = encodeIncoming(incoming);
  const decoded = new TextDecoder().decode(bytes);
  assert.deepEqual(JSON.parse(decoded), incoming);
  assert.ok(!decoded.endsWith('\n'));
});

test('encodeIncoming is the UTF-8 of JSON.stringify byte for byte, non-ASCII and lone surrogates included', () => {
  for (const content of ['hello', 'héllo wörld ✓ 🐝', { nested: ['a', 1, null] }, '', 'lone \ud800 surrogate']) {
    const message = completeMessage({ sender: 'client:x', receiver: 'a', message_type: 'inform', content, metadata: { traceparent: '00-abc' } }, { newId });
    assert.deepEqual(new Uint8Array(encodeIncoming(message)), new TextEncoder().encode(JSON.stringify(message)), JSON.stringify(content));
  }
});

test('a line without receiver replies to the sender, in the same conversation, in reply to the message id', () => {
  const { messages, errors } = parseOutput(['{"message_type":"inform","content":{"done":true}}'], incoming, 'agent-a');
  assert.deepEqual(errors, []);
  assert.deepEqual(messages, [
    { sender: 'agent-a', receiver: 'client:alice', message_type: 'inform', content: { done: true }, conversation_id: 'c-1', in_reply_to: 'm-1' },
  ]);
});

test('in_reply_to defaults to the incoming reply_with when it has one', () => {
  const { messages } = parseOutput(['{"message_type":"agree"}'], { ...incoming, reply_with: 'r-7' }, 'agent-a');
  assert.equal(messages[0]?.in_reply_to, 'r-7');
});

test('explicit fields win over the defaults; the sender is always the agent; unknown fields are dropped', () => {
  const line = JSON.stringify({
    message_type: 'cfp',
    receiver: 'agent-b',
    sender: 'agent-z',
    conversation_id: 'c-2',
    in_reply_to: 'x-1',
    reply_with: 'q-1',
    language: 'json',
    ontology: 'auction',
    protocol: 'fipa-contract-net',
    metadata: { traceparent: '00-abc' },
    message_id: 'forged',
    extra: 1,
  });
  const { messages, errors } = parseOutput([line], { ...incoming, conversation_id: undefined }, 'agent-a');
  assert.deepEqual(errors, []);
  assert.deepEqual(messages, [
    {
      sender: 'agent-a',
      receiver: 'agent-b',
      message_type: 'cfp',
      conversation_id: 'c-2',
      in_reply_to: 'x-1',
      reply_with: 'q-1',
      language: 'json',
      ontology: 'auction',
      protocol: 'fipa-contract-net',
      metadata: { traceparent: '00-abc' },
    },
  ]);
});

test('no conversation_id when neither the line nor the incoming message has one', () => {
  const { conversation_id: _omitted, ...withoutConversation } = incoming;
  const { messages } = parseOutput(['{"message_type":"inform"}'], withoutConversation, 'agent-a');
  assert.equal('conversation_id' in messages[0]!, false);
});

test('invalid lines are counted errors with their index; valid ones still go out; blank lines are skipped', () => {
  const lines = [
    'not json',
    '[1,2]',
    '{"content":1}',
    '{"message_type":"shout"}',
    '{"message_type":"inform","receiver":7}',
    '{"message_type":"inform","metadata":{"a":1}}',
    '',
    '   ',
    '{"message_type":"inform"}',
    'null',
  ];
  const { messages, errors } = parseOutput(lines, incoming, 'agent-a');
  assert.equal(messages.length, 1);
  assert.deepEqual(
    errors.map((e) => [e.line, e.reason]),
    [
      [0, 'not_json'],
      [1, 'not_object'],
      [2, 'missing_message_type'],
      [3, 'unknown_performative'],
      [4, 'invalid_field'],
      [5, 'invalid_field'],
      [9, 'not_object'],
    ],
  );
});

test('empty strings read as absent (proto3), as in a client message: the defaults apply', () => {
  const line = '{"message_type":"inform","receiver":"","conversation_id":"","in_reply_to":"","reply_with":"","language":"","ontology":"","protocol":""}';
  const { messages, errors } = parseOutput([line], { ...incoming, reply_with: 'r-7' }, 'agent-a');
  assert.deepEqual(errors, []);
  assert.deepEqual(messages, [{ sender: 'agent-a', receiver: 'client:alice', message_type: 'inform', conversation_id: 'c-1', in_reply_to: 'r-7' }]);
});

test('lowerCamelCase field names are read, as in a client message; both spellings of one field are an error', () => {
  const line = '{"messageType":"agree","conversationId":"c-9","replyWith":"q-2","inReplyTo":"x-3"}';
  const { messages, errors } = parseOutput([line, '{"message_type":"inform","messageType":"agree"}'], incoming, 'agent-a');
  assert.deepEqual(messages, [{ sender: 'agent-a', receiver: 'client:alice', message_type: 'agree', conversation_id: 'c-9', reply_with: 'q-2', in_reply_to: 'x-3' }]);
  assert.deepEqual(errors, [{ line: 1, reason: 'invalid_field', detail: 'message_type is given twice' }]);
});

test('a field a client could not send is an invalid line: ids, content and metadata follow the Message rules', () => {
  const cases: Array<[string, object]> = [
    ['receiver with a control character', { receiver: 'a\u0001b' }],
    ['conversation_id over 256 characters', { conversation_id: 'x'.repeat(257) }],
    ['reply_with with a lone surrogate', { reply_with: 'r\ud800' }],
    ['content with a lone surrogate', { content: '\udc00' }],
    ['JSON content with one nested', { content: { a: ['\ud800'] } }],
    ['content over 1 MiB', { content: 'x'.repeat(1024 * 1024 + 1) }],
    ['metadata with an empty key', { metadata: { '': 'v' } }],
    ['metadata with 33 entries', { metadata: Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, 'v'])) }],
    ['language not a string', { language: 7 }],
  ];
  for (const [what, fields] of cases) {
    // JSON.stringify writes the control character and the lone surrogates as \u escapes, as an agent would.
    const line = JSON.stringify({ message_type: 'inform', ...fields });
    const { messages, errors } = parseOutput([line], incoming, 'agent-a');
    assert.deepEqual(messages, [], what);
    assert.equal(errors[0]?.reason, 'invalid_field', what);
  }
  const { messages } = parseOutput(['{"message_type":"inform","content":"bee \ud83d\udc1d","metadata":{"k":"v"}}'], incoming, 'agent-a');
  assert.equal(messages[0]?.content, 'bee 🐝', 'a surrogate pair is fine');
});
