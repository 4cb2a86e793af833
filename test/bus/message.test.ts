import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SvcError } from '../../src/errors/svc-error.js';
import { parseOutput } from '../../src/sandbox/abi.js';
import { createIdGenerator } from '../../src/bus/message-id.js';
import {
  canReportFailure,
  completeMessage,
  failureMessage,
  PLATFORM_SENDER,
  validateMessage,
  type Message,
  type MessageLimits,
  type ValidateOptions,
} from '../../src/bus/message.js';

const NOW = Date.UTC(2025, 0, 2, 3, 4, 5, 678);
function ids(): () => string {
  let n = 0;
  return () => `id-${++n}`;
}
function opts(extra: Partial<ValidateOptions> = {}): ValidateOptions {
  return { sender: 'client:alice', now: () => NOW, newId: ids(), ...extra };
}
const LIMITS: MessageLimits = { maxContentBytes: 16, maxMetadataEntries: 2, maxMetadataBytes: 20, maxIdLength: 8 };

/** Runs `fn`, which must throw an SvcError, and returns it. */
function refusal(fn: () => unknown): SvcError {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof SvcError, `expected an SvcError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected a refusal');
}

test('a minimal client message is completed with ids, time and an empty metadata', () => {
  const message = validateMessage({ receiver: 'agent-1', message_type: 'request' }, opts());
  assert.deepEqual(message, {
    message_id: 'id-1',
    sender: 'client:alice',
    receiver: 'agent-1',
    message_type: 'request',
    conversation_id: 'id-2',
    metadata: {},
    created_at: '2025-01-02T03:04:05.678Z',
  });
});

test('every field is read, in snake_case and in lowerCamelCase', () => {
  const common = {
    receiver: 'agent-1',
    content: { task: 'x', n: [1, 2] },
    language: 'json',
    ontology: 'shop',
    protocol: 'fipa-request',
    metadata: { traceparent: '00-abc-def-01' },
    sender: 'client:alice',
  };
  const snake = validateMessage({ ...common, message_type: 'cfp', conversation_id: 'c-1', reply_with: 'r-1', in_reply_to: 'm-0' }, opts());
  const camel = validateMessage({ ...common, messageType: 'cfp', conversationId: 'c-1', replyWith: 'r-1', inReplyTo: 'm-0' }, opts());
  for (const message of [snake, camel]) {
    assert.equal(message.message_type, 'cfp');
    assert.equal(message.conversation_id, 'c-1');
    assert.deepEqual(message.content, common.content);
    assert.equal(message.reply_with, 'r-1');
    assert.equal(message.in_reply_to, 'm-0');
    assert.equal(message.language, 'json');
    assert.equal(message.ontology, 'shop');
    assert.equal(message.protocol, 'fipa-request');
    assert.deepEqual(message.metadata, { traceparent: '00-abc-def-01' });
  }
  assert.deepEqual(Object.keys(snake), Object.keys(camel), 'one field order whatever the input spelling');
});

test('null and empty strings read as absent (proto3), and the path receiver fills a missing one', () => {
  const message = validateMessage(
    { message_type: 'inform', receiver: null, content: null, language: '', metadata: null, message_id: '', created_at: null },
    opts({ receiver: 'agent-9' }),
  );
  assert.equal(message.receiver, 'agent-9');
  assert.ok(!('content' in message) && !('language' in message));
  assert.equal(message.message_id, 'id-1');
});

test('all 22 performatives are accepted', () => {
  const all = ['accept-proposal', 'agree', 'cancel', 'cfp', 'confirm', 'disconfirm', 'failure', 'inform', 'inform-if', 'inform-ref', 'not-understood',
    'propagate', 'propose', 'proxy', 'query-if', 'query-ref', 'refuse', 'reject-proposal', 'request', 'request-when', 'request-whenever', 'subscribe'];
  for (const type of all) assert.equal(validateMessage({ receiver: 'a', message_type: type }, opts()).message_type, type);
});

const deep: Record<string, unknown> = {};
let cursor = deep;
for (let i = 0; i < 20_000; i++) cursor = cursor['n'] = {};

const REFUSALS: Array<{ name: string; input: unknown; options?: Partial<ValidateOptions>; code?: string; field: string; reason: string; value?: string }> = [
  { name: 'not an object', input: 'hello', field: 'message', reason: 'wrong_type' },
  { name: 'an array', input: [], field: 'message', reason: 'wrong_type' },
  { name: 'null', input: null, field: 'message', reason: 'wrong_type' },
  { name: 'missing receiver', input: { message_type: 'inform' }, field: 'receiver', reason: 'required' },
  { name: 'missing message_type', input: { receiver: 'a' }, field: 'message_type', reason: 'required' },
  { name: 'unknown performative', input: { receiver: 'a', message_type: 'shout' }, field: 'message_type', reason: 'unknown_performative', value: 'shout' },
  { name: 'upper-case performative', input: { receiver: 'a', messageType: 'INFORM' }, field: 'messageType', reason: 'unknown_performative', value: 'INFORM' },
  { name: 'message_type not a string', input: { receiver: 'a', message_type: 7 }, field: 'message_type', reason: 'wrong_type' },
  { name: 'receiver not a string', input: { receiver: 42, message_type: 'inform' }, field: 'receiver', reason: 'wrong_type' },
  { name: 'receiver too long', input: { receiver: 'x'.repeat(9), message_type: 'inform' }, field: 'receiver', reason: 'too_long' },
  { name: 'receiver with a newline', input: { receiver: 'a\nb', message_type: 'inform' }, field: 'receiver', reason: 'control_characters' },
  { name: 'receiver other than the path', input: { receiver: 'b', message_type: 'inform' }, options: { receiver: 'a' }, field: 'receiver', reason: 'receiver_mismatch' },
  { name: 'conversation_id not a string', input: { receiver: 'a', message_type: 'inform', conversation_id: 1 }, field: 'conversation_id', reason: 'wrong_type' },
  { name: 'conversationId too long', input: { receiver: 'a', message_type: 'inform', conversationId: 'c'.repeat(9) }, field: 'conversationId', reason: 'too_long' },
  { name: 'reply_with not a string', input: { receiver: 'a', message_type: 'inform', reply_with: {} }, field: 'reply_with', reason: 'wrong_type' },
  { name: 'inReplyTo with a tab', input: { receiver: 'a', message_type: 'inform', inReplyTo: 'a\tb' }, field: 'inReplyTo', reason: 'control_characters' },
  { name: 'language not a string', input: { receiver: 'a', message_type: 'inform', language: true }, field: 'language', reason: 'wrong_type' },
  { name: 'ontology too long', input: { receiver: 'a', message_type: 'inform', ontology: 'o'.repeat(9) }, field: 'ontology', reason: 'too_long' },
  { name: 'protocol not a string', input: { receiver: 'a', message_type: 'inform', protocol: [] }, field: 'protocol', reason: 'wrong_type' },
  { name: 'content too large (string bytes)', input: { receiver: 'a', message_type: 'inform', content: 'é'.repeat(9) }, code: 'PAYLOAD_TOO_LARGE', field: 'content', reason: 'too_large' },
  { name: 'content too large (JSON)', input: { receiver: 'a', message_type: 'inform', content: { k: 'v'.repeat(20) } }, code: 'PAYLOAD_TOO_LARGE', field: 'content', reason: 'too_large' },
  { name: 'content not JSON', input: { receiver: 'a', message_type: 'inform', content: 10n }, field: 'content', reason: 'wrong_type' },
  { name: 'content nested past the stack', input: { receiver: 'a', message_type: 'inform', content: deep }, options: { limits: { ...LIMITS, maxContentBytes: 1e9 } }, field: 'content', reason: 'wrong_type' },
  { name: 'metadata not an object', input: { receiver: 'a', message_type: 'inform', metadata: 'x' }, field: 'metadata', reason: 'wrong_type' },
  { name: 'metadata value not a string', input: { receiver: 'a', message_type: 'inform', metadata: { k: 1 } }, field: 'metadata.k', reason: 'wrong_type' },
  { name: 'metadata empty key', input: { receiver: 'a', message_type: 'inform', metadata: { '': 'v' } }, field: 'metadata', reason: 'empty_key' },
  { name: 'metadata key too long', input: { receiver: 'a', message_type: 'inform', metadata: { kkkkkkkkk: 'v' } }, field: 'metadata.kkkkkkkkk', reason: 'too_long' },
  { name: 'metadata too many entries', input: { receiver: 'a', message_type: 'inform', metadata: { a: '1', b: '2', c: '3' } }, field: 'metadata', reason: 'too_many_entries' },
  { name: 'metadata too many bytes', input: { receiver: 'a', message_type: 'inform', metadata: { a: 'x'.repeat(20) } }, code: 'PAYLOAD_TOO_LARGE', field: 'metadata', reason: 'too_large' },
  { name: 'unknown field', input: { receiver: 'a', message_type: 'inform', priority: 1 }, field: 'priority', reason: 'unknown_field' },
  { name: 'prototype key', input: JSON.parse('{"receiver":"a","message_type":"inform","__proto__":{}}'), field: '__proto__', reason: 'unknown_field' },
  { name: 'same field in both spellings', input: { receiver: 'a', message_type: 'inform', messageType: 'inform' }, field: 'messageType', reason: 'duplicate_field' },
  { name: 'another sender', input: { receiver: 'a', message_type: 'inform', sender: 'agent-x' }, field: 'sender', reason: 'sender_mismatch' },
  { name: 'sender not a string', input: { receiver: 'a', message_type: 'inform', sender: 1 }, field: 'sender', reason: 'wrong_type' },
  { name: 'message_id from the client', input: { receiver: 'a', message_type: 'inform', message_id: 'm' }, field: 'message_id', reason: 'server_assigned' },
  { name: 'createdAt from the client', input: { receiver: 'a', message_type: 'inform', createdAt: '2025-01-01T00:00:00Z' }, field: 'createdAt', reason: 'server_assigned' },
  // Lone surrogates have no UTF-8 form: over gRPC they would be invalid UTF-8.
  { name: 'receiver with a lone high surrogate', input: { receiver: 'a\ud800b', message_type: 'inform' }, field: 'receiver', reason: 'invalid_utf16' },
  { name: 'sender with a lone low surrogate', input: { receiver: 'a', message_type: 'inform', sender: 'client:\udc00' }, field: 'sender', reason: 'invalid_utf16' },
  { name: 'message_type with a lone surrogate (not echoed)', input: { receiver: 'a', message_type: 'inform\ud800' }, field: 'message_type', reason: 'invalid_utf16' },
  { name: 'conversation_id with a lone low surrogate', input: { receiver: 'a', message_type: 'inform', conversation_id: 'c\udc00' }, field: 'conversation_id', reason: 'invalid_utf16' },
  { name: 'replyWith with a reversed pair', input: { receiver: 'a', message_type: 'inform', replyWith: '\udc00\ud800' }, field: 'replyWith', reason: 'invalid_utf16' },
  { name: 'in_reply_to ending in a high surrogate', input: { receiver: 'a', message_type: 'inform', in_reply_to: 'm-1\ud83d' }, field: 'in_reply_to', reason: 'invalid_utf16' },
  { name: 'language with a lone surrogate', input: { receiver: 'a', message_type: 'inform', language: '\udfff' }, field: 'language', reason: 'invalid_utf16' },
  { name: 'ontology with a lone surrogate', input: { receiver: 'a', message_type: 'inform', ontology: 'o\udbff' }, field: 'ontology', reason: 'invalid_utf16' },
  { name: 'protocol with a lone surrogate', input: { receiver: 'a', message_type: 'inform', protocol: 'p\udc00' }, field: 'protocol', reason: 'invalid_utf16' },
  { name: 'content with a lone low surrogate', input: { receiver: 'a', message_type: 'inform', content: 'hi \udc00' }, field: 'content', reason: 'invalid_utf16' },
  { name: 'content ending in a high surrogate', input: { receiver: 'a', message_type: 'inform', content: 'hi \ud83d' }, field: 'content', reason: 'invalid_utf16' },
  { name: 'JSON content with one in a nested string', input: { receiver: 'a', message_type: 'inform', content: { k: ['\ud800'] } }, field: 'content', reason: 'invalid_utf16' },
  { name: 'JSON content with one in a key', input: { receiver: 'a', message_type: 'inform', content: { 'k\udc00': 1 } }, field: 'content', reason: 'invalid_utf16' },
  { name: 'metadata key with a lone surrogate (named by the map)', input: { receiver: 'a', message_type: 'inform', metadata: { 'k\ud800': 'v' } }, field: 'metadata', reason: 'invalid_utf16' },
  { name: 'metadata value with a lone surrogate', input: { receiver: 'a', message_type: 'inform', metadata: { k: 'v\udc00' } }, field: 'metadata.k', reason: 'invalid_utf16' },
  { name: 'metadata value with a reversed pair', input: { receiver: 'a', message_type: 'inform', metadata: { tp: '\udc00\ud800' } }, field: 'metadata.tp', reason: 'invalid_utf16' },
];

for (const { name, input, options, code = 'INVALID_ARGUMENT', field, reason, value } of REFUSALS) {
  test(`refused: ${name}`, () => {
    const error = refusal(() => validateMessage(input, opts({ limits: LIMITS, ...options })));
    assert.equal(error.code, code);
    assert.equal(error.metadata['field'], field);
    assert.equal(error.metadata['reason'], reason);
    if (value !== undefined) assert.equal(error.metadata['value'], value);
    assert.ok(error.message.length > 0);
  });
}

test('surrogate pairs (an emoji) are accepted in every string field, metadata keys included', () => {
  const message = validateMessage(
    {
      receiver: 'agent-😀',
      message_type: 'inform',
      content: '😀',
      conversation_id: 'c-😀',
      reply_with: 'r-😀',
      in_reply_to: 'm-😀',
      language: '😀',
      ontology: '😀',
      protocol: '😀',
      metadata: { '😀': '😀' },
    },
    opts(),
  );
  assert.equal(message.receiver, 'agent-😀');
  assert.equal(message.content, '😀');
  assert.deepEqual(message.metadata, { '😀': '😀' });
  assert.deepEqual(validateMessage({ receiver: 'a', message_type: 'inform', content: { '😀': ['😀'] } }, opts()).content, { '😀': ['😀'] });
});

test('an unknown performative is echoed cut at 64 characters, never inside a surrogate pair', () => {
  const error = refusal(() => validateMessage({ receiver: 'a', message_type: `${'x'.repeat(63)}😀` }, opts()));
  assert.equal(error.metadata['reason'], 'unknown_performative');
  assert.equal(error.metadata['value'], 'x'.repeat(63));
});

test('a prototype key in metadata stays data', () => {
  const message = validateMessage({ receiver: 'a', message_type: 'inform', metadata: JSON.parse('{"__proto__":"x"}') }, opts());
  assert.equal(Object.getPrototypeOf(message.metadata), Object.prototype);
  assert.deepEqual(Object.keys(message.metadata), ['__proto__']);
});

test('limits are inclusive: content and metadata exactly at the bound pass', () => {
  const limits = { ...LIMITS, maxMetadataBytes: 4 };
  const message = validateMessage({ receiver: 'x'.repeat(8), message_type: 'inform', content: 'y'.repeat(16), metadata: { ab: 'cd' } }, opts({ limits }));
  assert.equal(message.content, 'y'.repeat(16));
});

test('completeMessage keeps what the draft has and fills the rest; an agent output line completes', () => {
  const incoming = completeMessage({ sender: 'client:alice', receiver: 'agent-a', message_type: 'request', reply_with: 'r-1' }, { newId: ids(), now: () => NOW });
  const { messages } = parseOutput(['{"message_type":"inform","content":42}'], incoming, 'agent-a');
  const [draft] = messages;
  assert.ok(draft);
  const reply = completeMessage(draft, { newId: () => 'fresh', now: () => NOW + 1 });
  assert.deepEqual(reply, {
    message_id: 'fresh',
    sender: 'agent-a',
    receiver: 'client:alice',
    message_type: 'inform',
    conversation_id: incoming.conversation_id,
    metadata: {},
    created_at: '2025-01-02T03:04:05.679Z',
    content: 42,
    in_reply_to: 'r-1',
  });
  const kept = completeMessage({ ...reply, message_id: 'm-7', created_at: 'then' }, { newId: ids() });
  assert.equal(kept.message_id, 'm-7');
  assert.equal(kept.created_at, 'then');
});

test('ids from a ULID generator, and a new conversation gets its own id', () => {
  const message = completeMessage({ sender: 's', receiver: 'r', message_type: 'inform' }, { newId: createIdGenerator() });
  assert.match(message.message_id, /^[0-9A-HJKMNP-TV-Z]{26}$/);
  assert.match(message.conversation_id, /^[0-9A-HJKMNP-TV-Z]{26}$/);
  assert.notEqual(message.message_id, message.conversation_id);
  assert.match(message.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
});

const original: Message = {
  message_id: 'm-1',
  sender: 'agent-a',
  receiver: 'agent-b',
  message_type: 'request',
  conversation_id: 'c-1',
  protocol: 'fipa-request',
  metadata: { traceparent: '00-t-s-01', other: 'not carried' },
  created_at: '2025-01-01T00:00:00.000Z',
};

const FAILURES = [
  { reason: 'unknown_receiver', detail: undefined, content: 'unknown receiver' },
  { reason: 'agent_failed', detail: undefined, content: 'agent failed' },
  { reason: 'mailbox_full', detail: undefined, content: 'mailbox full' },
  { reason: 'memory_pressure', detail: undefined, content: 'memory pressure' },
  { reason: 'execution_crashed', detail: 'fuel_exhausted', content: 'execution crashed: fuel_exhausted' },
] as const;

for (const { reason, detail, content } of FAILURES) {
  test(`failure message for ${reason}`, () => {
    const failure = failureMessage(original, reason, { detail, newId: ids(), now: () => NOW });
    assert.deepEqual(failure, {
      message_id: 'id-1',
      sender: PLATFORM_SENDER,
      receiver: 'agent-a',
      message_type: 'failure',
      conversation_id: 'c-1',
      metadata: { failure_reason: reason, failed_message_id: 'm-1', failed_receiver: 'agent-b', traceparent: '00-t-s-01' },
      created_at: '2025-01-02T03:04:05.678Z',
      content,
      in_reply_to: 'm-1',
      protocol: 'fipa-request',
    });
  });
}

test('a failure answers the reply_with of the original when it has one', () => {
  assert.equal(failureMessage({ ...original, reply_with: 'rw-9' }, 'mailbox_full', { newId: ids() }).in_reply_to, 'rw-9');
});

test('no failure is due for a failure, or for a message from or to the platform (no failure storms)', () => {
  assert.ok(canReportFailure(original));
  assert.ok(!canReportFailure({ ...original, message_type: 'failure' }));
  assert.ok(!canReportFailure({ ...original, sender: PLATFORM_SENDER }));
  assert.ok(!canReportFailure({ ...original, receiver: PLATFORM_SENDER }), 'a reply to a platform failure');
});
