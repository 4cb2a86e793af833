/**
 * Keys of the store's `meta` table. The two counters are bumped in the same
 * transaction as the change they count, so the database always knows how
 * many deploys and undeploys it acknowledged; the data directory keeps a copy
 * outside the file (data-dir-identity.ts) to tell a lost or shrunk store.
 */
export const META_KEYS = {
  /** This data directory's node id, generated with a new store. */
  nodeId: 'node_id',
  acknowledgedDeploys: 'acknowledged_deploys',
  acknowledgedUndeploys: 'acknowledged_undeploys',
  /** The cluster members this node last knew (known-members.ts), so a restart rejoins through them. */
  clusterMembers: 'cluster_members',
  /** Written by the write check of a faulted store (guarded-store.ts). */
  writeCheckedAt: 'write_checked_at',
} as const;
