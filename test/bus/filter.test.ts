import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SvcError } from '../../src/errors/svc-error.js';
import type { BusEvent } from '../../src/bus/events.js';
import { compileFilter, validateFilter, type BusFilter } from '../../src/bus/filter.js';
import { completeMessage, failureMessage, type Message } from '../../src/bus/message.js';
import type { Performative } from '../../src/bus/performatives.js';
import { createIdGenerator } from '../../src/bus/message-id.js';

const newId = createIdGenerator();

const draft = (sender: string, receiver: string, type: Performative): Message => completeMessage({ sender, receiver, message_type: type }, { newId });

function message(sender: string, receiver: string, type: Performative): BusEvent {
  return { kind: 'message', direction: 'sent', message: draft(sender, receiver, type) };
}
/** The platform's failure to c about a message c sent to d. */
const failureAboutD: BusEvent = { kind: 'message', direction: 'platform', message: failureMessage(draft('c', 'd', 'request'), 'mailbox_full', { newId }) };
const lifecycle = (agent: string): BusEvent => ({ kind: 'lifecycle', agent_id: agent, from: 'running', to: 'hibernated', reason: 'idle', at: '2025-01-01T00:00:00.000Z' });

const EVENTS: Record<string, BusEvent> = {
  'a→b inform': message('a', 'b', 'inform'),
  'b→a request': message('b', 'a', 'request'),
  'c→d inform': message('c', 'd', 'inform'),
  'c→d cfp': message('c', 'd', 'cfp'),
  'platform→c failure about d': failureAboutD,
  'lifecycle a': lifecycle('a'),
  'lifecycle c': lifecycle('c'),
};

const CASES: Array<{ name: string; filter: BusFilter; passes: string[] }> = [
  { name: 'none', filter: {}, passes: Object.keys(EVENTS) },
  { name: 'empty values', filter: { agent_id: '', message_types: [] }, passes: Object.keys(EVENTS) },
  { name: 'agent (sender or receiver, and its lifecycle)', filter: { agent_id: 'a' }, passes: ['a→b inform', 'b→a request', 'lifecycle a'] },
  { name: 'agent as receiver only, and the failure about a message to it', filter: { agent_id: 'd' }, passes: ['c→d inform', 'c→d cfp', 'platform→c failure about d'] },
  { name: 'the failure also reaches its receiver\'s stream', filter: { agent_id: 'c', message_types: ['failure'] }, passes: ['platform→c failure about d'] },
  { name: 'types (lifecycle excluded)', filter: { message_types: ['inform'] }, passes: ['a→b inform', 'c→d inform'] },
  { name: 'several types', filter: { message_types: ['request', 'cfp'] }, passes: ['b→a request', 'c→d cfp'] },
  { name: 'agent and types', filter: { agent_id: 'a', message_types: ['inform'] }, passes: ['a→b inform'] },
  { name: 'agent and types, lifecycle excluded', filter: { agent_id: 'c', message_types: ['cfp', 'inform'] }, passes: ['c→d inform', 'c→d cfp'] },
  { name: 'a failure about a message to d is not about a', filter: { agent_id: 'a', message_types: ['failure'] }, passes: [] },
  { name: 'unknown agent', filter: { agent_id: 'zz' }, passes: [] },
];

for (const { name, filter, passes } of CASES) {
  test(`filter: ${name}`, () => {
    const matches = compileFilter(filter);
    const got = Object.entries(EVENTS).filter(([, e]) => matches(e)).map(([k]) => k);
    assert.deepEqual(got, passes);
  });
}

test('validateFilter reads both spellings and treats empty as unset', () => {
  assert.deepEqual(validateFilter(undefined), {});
  assert.deepEqual(validateFilter({ agentId: 'a', messageTypes: ['inform', 'inform', 'cfp'] }), { agent_id: 'a', message_types: ['inform', 'cfp'] });
  assert.deepEqual(validateFilter({ agent_id: '', message_types: [] }), {});
  assert.deepEqual(validateFilter({ agent_id: null, message_types: null }), {});
});

const BAD: Array<[string, unknown, string, string]> = [
  ['not an object', 'a', 'filter', 'wrong_type'],
  ['unknown field', { agent: 'a' }, 'agent', 'unknown_field'],
  ['agent_id not a string', { agent_id: 1 }, 'agent_id', 'wrong_type'],
  ['agentId too long', { agentId: 'x'.repeat(300) }, 'agentId', 'too_long'],
  ['message_types not a list', { message_types: 'inform' }, 'message_types', 'wrong_type'],
  ['unknown performative', { messageTypes: ['inform', 'yell'] }, 'messageTypes', 'unknown_performative'],
  ['agent_id with a lone high surrogate', { agent_id: 'a\ud800b' }, 'agent_id', 'invalid_utf16'],
  ['agentId ending in a reversed pair', { agentId: 'a\udc00\ud800' }, 'agentId', 'invalid_utf16'],
  ['message_types with a lone low surrogate', { message_types: ['inform', '\udc00'] }, 'message_types', 'invalid_utf16'],
];
test('validateFilter accepts surrogate pairs; an unknown performative is echoed cut, never inside a pair', () => {
  assert.deepEqual(validateFilter({ agent_id: 'agent-😀' }), { agent_id: 'agent-😀' });
  assert.throws(() => validateFilter({ message_types: [`${'x'.repeat(63)}😀`] }), (error: unknown) => {
    assert.ok(error instanceof SvcError);
    assert.equal(error.metadata['reason'], 'unknown_performative');
    assert.equal(error.metadata['value'], 'x'.repeat(63));
    return true;
  });
});

for (const [name, input, field, reason] of BAD) {
  test(`validateFilter refuses ${name}`, () => {
    assert.throws(() => validateFilter(input), (error: unknown) => {
      assert.ok(error instanceof SvcError);
      assert.equal(error.code, 'INVALID_ARGUMENT');
      assert.equal(error.metadata['field'], field);
      assert.equal(error.metadata['reason'], reason);
      return true;
    });
  });
}
