/**
 * The gossip messages (proto/svc/v1/gossip.proto) as this module's code
 * handles them: one tagged union, snake_case fields as in the schema.
 */
import type { MemberState, NodeAddresses } from './member.js';

export interface AliveMessage extends NodeAddresses {
  readonly node_id: string;
  readonly incarnation: number;
}

/** A suspect or dead message: `from` accuses `node_id` at `incarnation`. */
export interface Accusation {
  readonly node_id: string;
  readonly incarnation: number;
  readonly from: string;
}

export interface PingMessage {
  readonly seq: number;
  readonly target_id: string;
  readonly source_id: string;
  readonly source_address: string;
}

export interface IndirectPingMessage extends PingMessage {
  readonly target_address: string;
  readonly nack: boolean;
}

export type GossipMessage =
  | ({ readonly kind: 'ping' } & PingMessage)
  | ({ readonly kind: 'indirect_ping' } & IndirectPingMessage)
  | { readonly kind: 'ack'; readonly seq: number }
  | { readonly kind: 'nack'; readonly seq: number }
  | ({ readonly kind: 'alive' } & AliveMessage)
  | ({ readonly kind: 'suspect' } & Accusation)
  | ({ readonly kind: 'dead' } & Accusation)
  | { readonly kind: 'user'; readonly payload: Uint8Array; readonly from: string };

export interface MemberSnapshot extends AliveMessage {
  readonly state: MemberState;
}

export interface PushPullMessage {
  readonly join: boolean;
  readonly members: readonly MemberSnapshot[];
  readonly user_state: Uint8Array;
}

export type StreamRequest =
  | { readonly kind: 'push_pull'; readonly push_pull: PushPullMessage }
  | { readonly kind: 'ping'; readonly ping: PingMessage }
  | { readonly kind: 'user'; readonly payload: Uint8Array; readonly from: string };

export type StreamResponse =
  | { readonly kind: 'push_pull'; readonly push_pull: PushPullMessage }
  | { readonly kind: 'ack'; readonly seq: number }
  | { readonly kind: 'delivered' };
