/**
 * Counters of one node's gossip traffic, for the metrics layer to read.
 * `rejected` counts packets and frames that failed authentication (a wrong
 * key, tampering, plain text where a secret is set); `malformed` those that
 * opened but did not decode.
 */

export interface GossipStats {
  packets_sent: number;
  packets_received: number;
  bytes_sent: number;
  bytes_received: number;
  requests_sent: number;
  requests_received: number;
  rejected: number;
  malformed: number;
  probes: number;
  probes_failed: number;
}

export function createGossipStats(): GossipStats {
  return {
    packets_sent: 0,
    packets_received: 0,
    bytes_sent: 0,
    bytes_received: 0,
    requests_sent: 0,
    requests_received: 0,
    rejected: 0,
    malformed: 0,
    probes: 0,
    probes_failed: 0,
  };
}
