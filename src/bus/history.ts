/**
 * Recent messages per agent, for the plain `GET /agents/{id}/messages`. A
 * ring of the last `perAgent` messages sent or received by each tracked
 * agent; agents are tracked from deploy to undeploy, so memory is bounded by
 * `perAgent × maxAgents` messages, and each ring to `bytesPerAgent` bytes
 * (message-size.ts; the oldest go first past it). Only tracked agents get a ring: a message
 * to a mistyped receiver or from a client costs nothing here.
 */
import type { Observable, Subscription } from 'rxjs';
import type { MessageTap } from './bus.js';
import type { BusEvent } from './events.js';
import type { Message } from './message.js';
import { messageBytes } from './message-size.js';
import { createRingBuffer, type RingBuffer } from './ring-buffer.js';

export const DEFAULT_HISTORY_PER_AGENT = 100;
/** The default `max_agents`: history never holds more agents than an instance hosts. */
export const DEFAULT_HISTORY_MAX_AGENTS = 10_000;
export const DEFAULT_HISTORY_BYTES_PER_AGENT = 1024 * 1024;

export interface MessageHistoryOptions {
  perAgent?: number;
  maxAgents?: number;
  bytesPerAgent?: number;
}

export interface MessageHistoryStats {
  agents: number;
  messages: number;
  /** Bytes of those messages. */
  bytes: number;
  /** Rings dropped because `maxAgents` was reached (the oldest tracked agent's goes first). */
  evictedAgents: number;
}

export interface MessageHistory {
  /** Starts keeping messages for an agent (on deploy or restore). Idempotent. */
  track(agentId: string): void;
  /** Drops an agent's messages (on undeploy). */
  forget(agentId: string): void;
  /** Appends a message to its sender's and its receiver's ring, where tracked. */
  record(message: Message): void;
  /** Oldest first; the newest `limit` when given. Empty for an untracked agent. */
  recent(agentId: string, limit?: number): Message[];
  /**
   * Records every message published on `events` once: `sent` and `platform`
   * events, not `delivered` (the same message again). Returns the subscription.
   */
  follow(events: Observable<BusEvent>): Subscription;
  /** The same choice as a bus tap (`MessageBus.tap`), which sees messages no subscription watches too. */
  readonly recorder: MessageTap;
  stats(): MessageHistoryStats;
}

export function createMessageHistory(options: MessageHistoryOptions = {}): MessageHistory {
  const perAgent = options.perAgent ?? DEFAULT_HISTORY_PER_AGENT;
  const maxAgents = options.maxAgents ?? DEFAULT_HISTORY_MAX_AGENTS;
  const bytesPerAgent = options.bytesPerAgent ?? DEFAULT_HISTORY_BYTES_PER_AGENT;
  for (const [name, value] of [['perAgent', perAgent], ['maxAgents', maxAgents], ['bytesPerAgent', bytesPerAgent]] as const) {
    if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer, got ${value}`);
  }
  // Map iteration is insertion order, which makes the oldest tracked agent the first key.
  const rings = new Map<string, { messages: RingBuffer<Message>; bytes: number }>();
  let messages = 0;
  let bytes = 0;
  let evictedAgents = 0;

  function append(agentId: string, message: Message): void {
    const ring = rings.get(agentId);
    if (ring === undefined) return;
    const size = messageBytes(message);
    if (size > bytesPerAgent) return;
    const evicted = ring.messages.pushEvicting(message);
    if (evicted === undefined) messages++;
    else drop(ring, messageBytes(evicted));
    ring.bytes += size;
    bytes += size;
    // Never empties the ring: the message just kept fits alone.
    while (ring.bytes > bytesPerAgent) {
      drop(ring, messageBytes(ring.messages.shift()!));
      messages--;
    }
  }

  function drop(ring: { bytes: number }, size: number): void {
    ring.bytes -= size;
    bytes -= size;
  }

  function forget(agentId: string): void {
    const ring = rings.get(agentId);
    if (ring === undefined) return;
    messages -= ring.messages.length;
    bytes -= ring.bytes;
    rings.delete(agentId);
  }

  function record(message: Message): void {
    append(message.sender, message);
    // A message an agent sends itself is one entry, not two.
    if (message.receiver !== message.sender) append(message.receiver, message);
  }

  const recorder: MessageTap = (direction, message) => {
    if (direction !== 'delivered') record(message);
  };

  return {
    track(agentId) {
      if (rings.has(agentId)) return;
      if (rings.size >= maxAgents) {
        const oldest = rings.keys().next().value;
        if (oldest !== undefined) {
          forget(oldest);
          evictedAgents++;
        }
      }
      rings.set(agentId, { messages: createRingBuffer<Message>(perAgent), bytes: 0 });
    },
    forget,
    record,
    recent(agentId, limit) {
      return rings.get(agentId)?.messages.toArray(limit) ?? [];
    },
    follow(events) {
      return events.subscribe((event) => {
        if (event.kind === 'message') recorder(event.direction, event.message);
      });
    },
    recorder,
    stats: () => ({ agents: rings.size, messages, bytes, evictedAgents }),
  };
}
