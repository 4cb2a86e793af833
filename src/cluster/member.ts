/**
 * A member of the cluster as this node sees it. The field names are the ones
 * of the member list the API serves (`ListMembers`), so the layer above hands
 * them on without renaming.
 */

export const MEMBER_STATES = ['alive', 'suspect', 'dead', 'left'] as const;
export type MemberState = (typeof MEMBER_STATES)[number];

/** Where a node is reached: gossip (UDP and TCP on one port), gRPC and HTTP. Carried in its alive messages. */
export interface NodeAddresses {
  readonly address: string;
  readonly grpc_address: string;
  readonly http_address: string;
}

export interface Member extends NodeAddresses {
  readonly node_id: string;
  readonly state: MemberState;
  readonly incarnation: number;
}

/** A member with the time (clock milliseconds) its state last changed: suspicion and reaping read it. */
export interface MemberRecord extends Member {
  readonly changed_at: number;
}

export function sameAddresses(a: NodeAddresses, b: NodeAddresses): boolean {
  return a.address === b.address && a.grpc_address === b.grpc_address && a.http_address === b.http_address;
}

export function publicMember(record: MemberRecord): Member {
  return {
    node_id: record.node_id,
    address: record.address,
    grpc_address: record.grpc_address,
    http_address: record.http_address,
    state: record.state,
    incarnation: record.incarnation,
  };
}
