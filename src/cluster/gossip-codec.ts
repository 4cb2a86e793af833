/**
 * Encodes and decodes the gossip schema (proto/svc/v1/gossip.proto) with
 * protobufjs. Decoding checks what the schema cannot say (an alive message
 * names a node and an address, ...) and throws `GossipDecodeError` on bytes
 * that are not a valid message, so the caller drops and counts them.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import type { MemberState } from './member.js';
import type { AliveMessage, GossipMessage, MemberSnapshot, PingMessage, PushPullMessage, StreamRequest, StreamResponse } from './gossip-messages.js';

const GOSSIP_PROTO = join('proto', 'svc', 'v1', 'gossip.proto');
const PACKAGE = 'svc.v1.gossip';
/** Tag of `Packet.messages` (field 1, length-delimited): pre-encoded messages are framed with it directly. */
const PACKET_MESSAGES_TAG = (1 << 3) | 2;

export class GossipDecodeError extends Error {
  override readonly name = 'GossipDecodeError';
}

/** Found by walking up from this file: it runs from `src/cluster/` under tsx and from `dist/src/cluster/` once built. */
function protoPath(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); dir !== dirname(dir); dir = dirname(dir)) {
    if (existsSync(join(dir, GOSSIP_PROTO))) return join(dir, GOSSIP_PROTO);
  }
  throw new Error(`cannot find ${GOSSIP_PROTO} above ${fileURLToPath(import.meta.url)}`);
}

interface Types {
  states: protobuf.Enum;
  message: protobuf.Type;
  packet: protobuf.Type;
  request: protobuf.Type;
  response: protobuf.Type;
}

let types: Types | undefined;

function load(): Types {
  if (types) return types;
  const root = new protobuf.Root().loadSync(protoPath(), { keepCase: true });
  root.resolveAll();
  types = {
    states: root.lookupEnum(`${PACKAGE}.MemberState`),
    message: root.lookupType(`${PACKAGE}.Message`),
    packet: root.lookupType(`${PACKAGE}.Packet`),
    request: root.lookupType(`${PACKAGE}.StreamRequest`),
    response: root.lookupType(`${PACKAGE}.StreamResponse`),
  };
  return types;
}

const TO_OBJECT: protobuf.IConversionOptions = { longs: Number, enums: String, defaults: true, oneofs: true, bytes: Array };

const STATE_TO_WIRE: Record<MemberState, string> = {
  alive: 'MEMBER_STATE_ALIVE',
  suspect: 'MEMBER_STATE_SUSPECT',
  dead: 'MEMBER_STATE_DEAD',
  left: 'MEMBER_STATE_LEFT',
};
const WIRE_TO_STATE = new Map(Object.entries(STATE_TO_WIRE).map(([state, wire]) => [wire, state as MemberState]));

type Obj = Record<string, unknown>;

function field(obj: Obj, name: string): Obj {
  const value = obj[name];
  if (value === null || typeof value !== 'object') throw new GossipDecodeError(`missing ${name}`);
  return value as Obj;
}

function str(obj: Obj, name: string, required = true): string {
  const value = obj[name];
  if (typeof value !== 'string' || (required && value === '')) throw new GossipDecodeError(`missing ${name}`);
  return value;
}

function num(obj: Obj, name: string): number {
  const value = obj[name];
  if (typeof value !== 'number') throw new GossipDecodeError(`missing ${name}`);
  return value;
}

function byteField(obj: Obj, name: string): Uint8Array {
  const value = obj[name];
  if (!Array.isArray(value)) throw new GossipDecodeError(`missing ${name}`);
  return Uint8Array.from(value as number[]);
}

function alive(obj: Obj): AliveMessage {
  return {
    node_id: str(obj, 'node_id'),
    incarnation: num(obj, 'incarnation'),
    address: str(obj, 'address'),
    grpc_address: str(obj, 'grpc_address', false),
    http_address: str(obj, 'http_address', false),
  };
}

function ping(obj: Obj): PingMessage {
  return { seq: num(obj, 'seq'), target_id: str(obj, 'target_id'), source_id: str(obj, 'source_id'), source_address: str(obj, 'source_address') };
}

function fromWire(obj: Obj): GossipMessage {
  const body = obj.body;
  switch (body) {
    case 'ping':
      return { kind: 'ping', ...ping(field(obj, 'ping')) };
    case 'indirect_ping': {
      const m = field(obj, 'indirect_ping');
      return { kind: 'indirect_ping', ...ping(m), target_address: str(m, 'target_address'), nack: m.nack === true };
    }
    case 'ack':
    case 'nack':
      return { kind: body, seq: num(field(obj, body), 'seq') };
    case 'alive':
      return { kind: 'alive', ...alive(field(obj, 'alive')) };
    case 'suspect':
    case 'dead': {
      const m = field(obj, body);
      return { kind: body, node_id: str(m, 'node_id'), incarnation: num(m, 'incarnation'), from: str(m, 'from') };
    }
    case 'user': {
      const m = field(obj, 'user');
      return { kind: 'user', payload: byteField(m, 'payload'), from: str(m, 'from') };
    }
    default:
      throw new GossipDecodeError(`unknown message ${String(body)}`);
  }
}

function toWire(message: GossipMessage): Obj {
  const { kind, ...rest } = message;
  return { [kind]: rest };
}

/** One `Message`, ready to be queued for gossip or framed into a packet. */
export function encodeMessage(message: GossipMessage): Uint8Array {
  return load().message.encode(toWire(message)).finish();
}

/** A `Packet` of already encoded messages: the framing protobuf gives a repeated field. */
export function encodePacket(encodedMessages: readonly Uint8Array[]): Uint8Array {
  const writer = protobuf.Writer.create();
  for (const bytes of encodedMessages) writer.uint32(PACKET_MESSAGES_TAG).bytes(bytes);
  return writer.finish();
}

/** Bytes a message adds to a packet beyond its own length: the tag and a length prefix of up to 2 bytes. */
export const PACKET_ITEM_OVERHEAD = 3;

export function decodePacket(bytes: Uint8Array): GossipMessage[] {
  const { packet } = load();
  let decoded: Obj;
  try {
    decoded = packet.toObject(packet.decode(bytes), TO_OBJECT);
  } catch (err) {
    throw new GossipDecodeError(err instanceof Error ? err.message : String(err));
  }
  const messages = decoded.messages;
  if (!Array.isArray(messages) || messages.length === 0) throw new GossipDecodeError('empty packet');
  return messages.map((m) => fromWire(m as Obj));
}

function snapshotToWire(member: MemberSnapshot): Obj {
  // Plain objects are encoded without conversion, so the enum goes as its number.
  return { ...member, state: load().states.values[STATE_TO_WIRE[member.state]] };
}

function snapshotFromWire(obj: Obj): MemberSnapshot {
  const state = WIRE_TO_STATE.get(str(obj, 'state'));
  if (state === undefined) throw new GossipDecodeError(`bad member state ${String(obj.state)}`);
  return { ...alive(obj), state };
}

function pushPullToWire(message: PushPullMessage): Obj {
  return { join: message.join, members: message.members.map(snapshotToWire), user_state: message.user_state };
}

function pushPullFromWire(obj: Obj): PushPullMessage {
  const members = obj.members;
  if (!Array.isArray(members)) throw new GossipDecodeError('missing members');
  return { join: obj.join === true, members: members.map((m) => snapshotFromWire(m as Obj)), user_state: byteField(obj, 'user_state') };
}

function decodeWith(type: protobuf.Type, bytes: Uint8Array): Obj {
  try {
    return type.toObject(type.decode(bytes), TO_OBJECT);
  } catch (err) {
    throw new GossipDecodeError(err instanceof Error ? err.message : String(err));
  }
}

export function encodeStreamRequest(request: StreamRequest): Uint8Array {
  const wire =
    request.kind === 'push_pull'
      ? { push_pull: pushPullToWire(request.push_pull) }
      : request.kind === 'ping'
        ? { ping: request.ping }
        : { user: { payload: request.payload, from: request.from } };
  return load().request.encode(wire).finish();
}

export function decodeStreamRequest(bytes: Uint8Array): StreamRequest {
  const obj = decodeWith(load().request, bytes);
  switch (obj.body) {
    case 'push_pull':
      return { kind: 'push_pull', push_pull: pushPullFromWire(field(obj, 'push_pull')) };
    case 'ping':
      return { kind: 'ping', ping: ping(field(obj, 'ping')) };
    case 'user': {
      const m = field(obj, 'user');
      return { kind: 'user', payload: byteField(m, 'payload'), from: str(m, 'from') };
    }
    default:
      throw new GossipDecodeError(`unknown request ${String(obj.body)}`);
  }
}

export function encodeStreamResponse(response: StreamResponse): Uint8Array {
  const wire =
    response.kind === 'push_pull'
      ? { push_pull: pushPullToWire(response.push_pull) }
      : response.kind === 'ack'
        ? { ack: { seq: response.seq } }
        : { delivered: true };
  return load().response.encode(wire).finish();
}

export function decodeStreamResponse(bytes: Uint8Array): StreamResponse {
  const obj = decodeWith(load().response, bytes);
  switch (obj.body) {
    case 'push_pull':
      return { kind: 'push_pull', push_pull: pushPullFromWire(field(obj, 'push_pull')) };
    case 'ack':
      return { kind: 'ack', seq: num(field(obj, 'ack'), 'seq') };
    case 'delivered':
      return { kind: 'delivered' };
    default:
      throw new GossipDecodeError(`unknown response ${String(obj.body)}`);
  }
}
