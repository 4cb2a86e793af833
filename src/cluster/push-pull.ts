/**
 * Anti-entropy (memberlist's push-pull): both sides send their whole table
 * and the layer above's state, and each merges the other's. It repairs what
 * lost gossip missed, and it is how a node joins.
 */
import type { MemberSnapshot, PushPullMessage } from './gossip-messages.js';
import type { MemberTable } from './member-table.js';
import type { MembershipDelegate } from './membership-delegate.js';
import type { MembershipState } from './membership-state.js';
import type { Streams } from './streams.js';

export interface PushPull {
  local(join: boolean): PushPullMessage;
  merge(remote: PushPullMessage): void;
  /** One exchange with `address`; rejects when it could not be completed. */
  exchange(address: string, join: boolean, timeoutMs: number): Promise<void>;
}

export interface PushPullOptions {
  readonly table: MemberTable;
  readonly state: MembershipState;
  readonly delegate: MembershipDelegate;
  readonly streams: Streams;
}

const EMPTY = new Uint8Array(0);

export function createPushPull(options: PushPullOptions): PushPull {
  const { table, state, delegate, streams } = options;

  function local(join: boolean): PushPullMessage {
    const members: MemberSnapshot[] = table.all().map((m) => ({
      node_id: m.node_id,
      incarnation: m.incarnation,
      address: m.address,
      grpc_address: m.grpc_address,
      http_address: m.http_address,
      state: m.state,
    }));
    return { join, members, user_state: delegate.localState?.(join) ?? EMPTY };
  }

  function merge(remote: PushPullMessage): void {
    state.merge(remote.members);
    if (remote.user_state.length > 0) delegate.mergeRemoteState?.(remote.user_state, remote.join);
  }

  return {
    local,
    merge,
    async exchange(address, join, timeoutMs) {
      const response = await streams.request(address, { kind: 'push_pull', push_pull: local(join) }, timeoutMs);
      if (response.kind !== 'push_pull') throw new Error(`push-pull with ${address}: answered with ${response.kind}`);
      merge(response.push_pull);
    },
  };
}
