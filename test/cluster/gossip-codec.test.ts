import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  decodePacket,
  decodeStreamRequest,
  decodeStreamResponse,
  encodeMessage,
  encodePacket,
  encodeStreamRequest,
  encodeStreamResponse,
  GossipDecodeError,
} from '../../src/cluster/gossip-codec.js';
import type { GossipMessage, StreamRequest, StreamResponse } from '../../src/cluster/gossip-messages.js';

const messages: GossipMessage[] = [
  { kind: 'ping', seq: 7, target_id: 'b', source_id: 'a', source_address: '127.0.0.1:7946' },
  { kind: 'indirect_ping', seq: 4_294_967_295, target_id: 'c', target_address: '[::1]:7946', source_id: 'a', source_address: 'a:1', nack: true },
  { kind: 'ack', seq: 0 },
  { kind: 'nack', seq: 12 },
  { kind: 'alive', node_id: 'b', incarnation: 3, address: 'b:7946', grpc_address: 'b:50051', http_address: '' },
  { kind: 'suspect', node_id: 'b', incarnation: 3, from: 'a' },
  { kind: 'dead', node_id: 'b', incarnation: 0, from: 'b' },
  { kind: 'user', payload: new Uint8Array([0, 1, 255]), from: 'a' },
];

const normalise = (value: unknown) => JSON.parse(JSON.stringify(value, (_k, v: unknown) => (v instanceof Uint8Array ? [...v] : v))) as unknown;

describe('gossip codec', () => {
  it('a packet of every message kind decodes to the same messages', () => {
    const packet = encodePacket(messages.map(encodeMessage));
    assert.deepEqual(normalise(decodePacket(packet)), normalise(messages));
  });

  const requests: StreamRequest[] = [
    {
      kind: 'push_pull',
      push_pull: {
        join: true,
        members: [
          { node_id: 'a', incarnation: 1, address: 'a:1', grpc_address: 'a:2', http_address: 'a:3', state: 'alive' },
          { node_id: 'b', incarnation: 9, address: 'b:1', grpc_address: '', http_address: '', state: 'left' },
          { node_id: 'c', incarnation: 2, address: 'c:1', grpc_address: '', http_address: '', state: 'suspect' },
          { node_id: 'd', incarnation: 0, address: 'd:1', grpc_address: '', http_address: '', state: 'dead' },
        ],
        user_state: new Uint8Array([1, 2, 3]),
      },
    },
    { kind: 'ping', ping: { seq: 3, target_id: 'b', source_id: 'a', source_address: 'a:1' } },
    { kind: 'user', payload: new Uint8Array([9]), from: 'a' },
  ];
  for (const request of requests) {
    it(`stream request ${request.kind} round-trips`, () => assert.deepEqual(normalise(decodeStreamRequest(encodeStreamRequest(request))), normalise(request)));
  }

  const responses: StreamResponse[] = [
    { kind: 'push_pull', push_pull: { join: false, members: [], user_state: new Uint8Array(0) } },
    { kind: 'ack', seq: 5 },
    { kind: 'delivered' },
  ];
  for (const response of responses) {
    it(`stream response ${response.kind} round-trips`, () => assert.deepEqual(normalise(decodeStreamResponse(encodeStreamResponse(response))), normalise(response)));
  }

  const bad: Array<[string, Uint8Array]> = [
    ['random bytes', new Uint8Array([0xff, 0xff, 0xff, 0xff, 0x0f])],
    ['an empty packet', new Uint8Array(0)],
    ['an alive without a node id', encodePacket([encodeMessage({ kind: 'alive', node_id: '', incarnation: 1, address: 'x:1', grpc_address: '', http_address: '' })])],
    ['an alive without an address', encodePacket([encodeMessage({ kind: 'alive', node_id: 'x', incarnation: 1, address: '', grpc_address: '', http_address: '' })])],
    ['a suspect without an accuser', encodePacket([encodeMessage({ kind: 'suspect', node_id: 'x', incarnation: 1, from: '' })])],
    ['a message with no body', new Uint8Array([0x0a, 0x00])],
    ['a truncated message', encodePacket([encodeMessage({ kind: 'ack', seq: 300 })]).subarray(0, 3)],
  ];
  for (const [name, packet] of bad) {
    it(`${name} is refused with GossipDecodeError`, () => assert.throws(() => decodePacket(packet), GossipDecodeError));
  }

  it('a push-pull with an unspecified member state is refused', () => {
    const request: StreamRequest = { kind: 'push_pull', push_pull: { join: false, members: [{ node_id: 'a', incarnation: 0, address: 'a:1', grpc_address: '', http_address: '', state: 'alive' }], user_state: new Uint8Array(0) } };
    const encoded = encodeStreamRequest(request);
    // The state is the last byte pair of the member record: field 6, varint 1 (alive) → 0 (unspecified).
    const tampered = Uint8Array.from(encoded);
    const at = tampered.lastIndexOf(0x30);
    tampered[at + 1] = 0;
    assert.throws(() => decodeStreamRequest(tampered), GossipDecodeError);
    assert.throws(() => decodeStreamResponse(new Uint8Array([0x08, 0x01])), GossipDecodeError);
  });
});
