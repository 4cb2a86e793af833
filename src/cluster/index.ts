/**
 * Cluster membership (DESIGN.md section 10): SWIM with Lifeguard, after
 * hashicorp/memberlist. See docs/cluster.md. The layer above (the agent
 * registry, routing, failover) builds on `openClusterNode` and the
 * `MembershipDelegate`.
 */
export { openClusterNode, checkClusterSettings, checkBindAllowed } from './cluster-node.js';
export type { ClusterNodeOptions } from './cluster-node.js';
export { ClusterSettingsError, checkSwimSettings } from './cluster-settings.js';
export type { ClusterSettings, SwimSettings } from './cluster-settings.js';
export { createMembership, LEAVE_TIMEOUT_MS, STREAM_TIMEOUT_MS } from './membership.js';
export type { JoinResult, Membership, MembershipOptions } from './membership.js';
export type { MembershipDelegate } from './membership-delegate.js';
export { MEMBER_STATES } from './member.js';
export type { Member, MemberState, NodeAddresses } from './member.js';
export type { MemberChange, MemberCounts, Presence } from './member-table.js';
export type { ChangeReason } from './state-decisions.js';
export type { GossipStats } from './gossip-stats.js';
export { createBroadcastQueue } from './broadcast-queue.js';
export type { BroadcastQueue, BroadcastQueueOptions } from './broadcast-queue.js';
export { CLUSTER_SECRET_BYTES, decodeClusterSecret, isClusterSecret } from './gossip-cipher.js';
export { decodeKnownMembers, encodeKnownMembers, KnownMembersError, knownMembers, rejoinAddresses } from './known-members.js';
export type { KnownMember } from './known-members.js';
export { createUdpTcpTransport } from './transport-udp-tcp.js';
export type { Transport, TransportHandlers } from './transport.js';
export { createMemoryNetwork } from './memory-network.js';
export type { LinkConditions, LinkStats, MemoryNetwork } from './memory-network.js';
export { createStallableClock } from './stallable-clock.js';
export type { StallableClock } from './stallable-clock.js';
export { createEventLoopDelaySource } from './loop-delay.js';
export type { LoopDelaySource } from './loop-delay.js';
export { createSeededRandom } from './seeded-random.js';
export { createSimCluster, DEFAULT_SWIM, falseDeaths, simAddress } from './simulation.js';
export type { ObservedChange, SimCluster, SimClusterOptions, SimNode } from './simulation.js';
