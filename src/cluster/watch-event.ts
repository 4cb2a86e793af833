/**
 * What travels in a `Watch` stream (cluster.proto): one bus event about the
 * followed agent, as its node published it. The watching node checks the
 * shape (a node on another version, a damaged payload) before any subscriber
 * sees it.
 */
import type { BusEvent, LifecycleEvent, MessageDirection } from '../bus/events.js';
import { decodeForwarded, encodeForwarded, parseJsonObject } from './forwarded-message.js';

export interface WatchEventProto {
  direction: string;
  message_json: string;
  lifecycle_json: string;
}

const LIFECYCLE = 'lifecycle';
const DIRECTIONS: readonly string[] = ['sent', 'delivered', 'platform'] satisfies MessageDirection[];

export function encodeWatchEvent(event: BusEvent): WatchEventProto {
  if (event.kind === 'lifecycle') return { direction: LIFECYCLE, message_json: '', lifecycle_json: JSON.stringify(event) };
  return { direction: event.direction, message_json: encodeForwarded(event.message), lifecycle_json: '' };
}

function decodeLifecycle(text: string): LifecycleEvent | undefined {
  const e = parseJsonObject(text);
  if (e === undefined) return undefined;
  const strings = [e.agent_id, e.to, e.reason, e.at].every((v) => typeof v === 'string' && v !== '');
  if (e.kind !== LIFECYCLE || !strings || (e.from !== null && typeof e.from !== 'string')) return undefined;
  return { kind: 'lifecycle', agent_id: e.agent_id as string, from: e.from as string | null, to: e.to as string, reason: e.reason as string, at: e.at as string };
}

/** The event, or undefined for one no node of this version sends. */
export function decodeWatchEvent(proto: WatchEventProto): BusEvent | undefined {
  if (proto.direction === LIFECYCLE) return decodeLifecycle(proto.lifecycle_json);
  if (!DIRECTIONS.includes(proto.direction)) return undefined;
  const message = decodeForwarded(proto.message_json);
  return message === undefined ? undefined : { kind: 'message', direction: proto.direction as MessageDirection, message };
}
