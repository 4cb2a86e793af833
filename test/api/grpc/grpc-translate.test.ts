import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { BusEvent } from '../../../src/bus/events.js';
import { completeMessage } from '../../../src/bus/message.js';
import {
  contentToText,
  deployRequestFrom,
  listRequestFrom,
  messageToProto,
  streamedMessage,
} from '../../../src/api/grpc/grpc-translate.js';
import { createIdGenerator } from '../../../src/bus/message-id.js';

const newId = createIdGenerator();

describe('deployRequestFrom', () => {
  it('fills resources a client left unset (proto3 sends null for an absent sub-message)', () => {
    const wasm = new Uint8Array([0, 97, 115, 109]);
    assert.deepEqual(deployRequestFrom({ name: 'echo', wasm_module: wasm, capabilities: ['echo'], resources: null }), {
      name: 'echo',
      wasm_module: wasm,
      capabilities: ['echo'],
      resources: { memory_limit: 0, cpu_shares: 0 },
    });
  });

  it('keeps the resources given', () => {
    const request = deployRequestFrom({ name: 'n', wasm_module: new Uint8Array(), capabilities: [], resources: { memory_limit: 65536, cpu_shares: 2 } });
    assert.deepEqual(request.resources, { memory_limit: 65536, cpu_shares: 2 });
  });
});

describe('listRequestFrom', () => {
  const cases: Array<[string, { page_size: number; page_token: string }, object]> = [
    ['defaults mean the server default', { page_size: 0, page_token: '' }, {}],
    ['a page size', { page_size: 10, page_token: '' }, { page_size: 10 }],
    ['a token', { page_size: 0, page_token: 'abc' }, { page_token: 'abc' }],
    ['both', { page_size: 5, page_token: 'abc' }, { page_size: 5, page_token: 'abc' }],
  ];
  for (const [name, input, expected] of cases) {
    it(name, () => assert.deepEqual(listRequestFrom(input), expected));
  }
});

describe('contentToText', () => {
  const cases: Array<[string, unknown, string]> = [
    ['absent', undefined, ''],
    ['null', null, ''],
    ['a string as is', 'hello', 'hello'],
    ['a string that looks like JSON stays as is', '{"a":1}', '{"a":1}'],
    ['an object as its JSON text', { a: [1, 2], b: 'x' }, '{"a":[1,2],"b":"x"}'],
    ['an array', [1, 'two'], '[1,"two"]'],
    ['a number', 42, '42'],
    ['a boolean', false, 'false'],
  ];
  for (const [name, input, expected] of cases) {
    it(name, () => assert.equal(contentToText(input), expected));
  }
});

describe('messageToProto', () => {
  it('writes every field, absent optional ones as empty strings', () => {
    const message = completeMessage({ sender: 'client:anonymous', receiver: 'agent-1', message_type: 'inform', content: { n: 1 } }, { newId });
    assert.deepEqual(messageToProto(message), {
      message_id: message.message_id,
      sender: 'client:anonymous',
      receiver: 'agent-1',
      message_type: 'inform',
      content: '{"n":1}',
      conversation_id: message.conversation_id,
      reply_with: '',
      in_reply_to: '',
      language: '',
      ontology: '',
      protocol: '',
      metadata: {},
      created_at: message.created_at,
    });
  });

  it('keeps the optional fields that are set', () => {
    const message = completeMessage({
      sender: 'a', receiver: 'b', message_type: 'request', reply_with: 'r1', in_reply_to: 'q0', language: 'json', ontology: 'o', protocol: 'fipa-request', metadata: { traceparent: 'x' },
    }, { newId });
    const proto = messageToProto(message);
    assert.equal(proto.reply_with, 'r1');
    assert.equal(proto.in_reply_to, 'q0');
    assert.equal(proto.language, 'json');
    assert.equal(proto.ontology, 'o');
    assert.equal(proto.protocol, 'fipa-request');
    assert.deepEqual(proto.metadata, { traceparent: 'x' });
  });
});

describe('streamedMessage', () => {
  const message = completeMessage({ sender: 'a', receiver: 'b', message_type: 'inform' }, { newId });
  const cases: Array<[string, BusEvent, boolean]> = [
    ['a sent message', { kind: 'message', direction: 'sent', message }, true],
    ['a platform failure', { kind: 'message', direction: 'platform', message }, true],
    ['the same message delivered (already streamed as sent)', { kind: 'message', direction: 'delivered', message }, false],
    ['a lifecycle event (no Message form)', { kind: 'lifecycle', agent_id: 'a', from: null, to: 'starting', reason: 'deploy', at: message.created_at }, false],
  ];
  for (const [name, event, streamed] of cases) {
    it(name, () => assert.equal(streamedMessage(event), streamed ? message : undefined));
  }
});
