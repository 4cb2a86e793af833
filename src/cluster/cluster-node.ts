/**
 * A cluster node on a real network: settings checked (the secret, the bind
 * address), the UDP/TCP port bound, the membership started. The server calls
 * this with `config.cluster`, then joins its seeds and the members it last
 * knew.
 */
import type { Clock } from '../../supervisors/clock.js';
import type { Random } from '../../supervisors/random.js';
import { ClusterSettingsError, checkSwimSettings, type ClusterSettings } from './cluster-settings.js';
import { decodeClusterSecret } from './gossip-cipher.js';
import { isLoopbackHost, isWildcardHost, parseHostPort } from './host-port.js';
import type { LoopDelaySource } from './loop-delay.js';
import { createMembership, type Membership } from './membership.js';
import type { MembershipDelegate } from './membership-delegate.js';
import { createUdpTcpTransport } from './transport-udp-tcp.js';

export interface ClusterNodeOptions {
  readonly nodeId: string;
  readonly grpcAddress?: string;
  readonly httpAddress?: string;
  readonly delegate?: MembershipDelegate;
  readonly clock?: Clock;
  readonly random?: Random;
  readonly loopDelay?: LoopDelaySource;
  /** Socket errors that do not stop the node, for the log. */
  readonly onTransportError?: (err: Error) => void;
}

/** Refuses to gossip in the clear anywhere but on loopback. */
export function checkBindAllowed(addr: string, hasSecret: boolean): void {
  if (hasSecret) return;
  if (!isLoopbackHost(parseHostPort(addr).host)) {
    throw new ClusterSettingsError('cluster.addr', `${addr} is not a loopback address; set cluster.secret (SVC_CLUSTER_SECRET) so gossip is encrypted and authenticated`);
  }
}

/** Checks every setting before anything is bound; throws `ClusterSettingsError` naming the key. */
export function checkClusterSettings(settings: ClusterSettings): Uint8Array | undefined {
  checkSwimSettings(settings);
  if (settings.addr === '') throw new ClusterSettingsError('cluster.addr', 'is empty: this node runs alone');
  let key: Uint8Array | undefined;
  if (settings.secret !== '') {
    key = decodeClusterSecret(settings.secret);
    if (key === undefined) throw new ClusterSettingsError('cluster.secret', 'must be base64 of 32 bytes');
  }
  checkBindAllowed(settings.addr, key !== undefined);
  if (settings.advertise_addr === '' && isWildcardHost(parseHostPort(settings.addr).host)) {
    throw new ClusterSettingsError('cluster.advertise_addr', `must be set when cluster.addr binds every interface (${settings.addr})`);
  }
  for (const seed of settings.seeds) {
    try {
      parseHostPort(seed);
    } catch {
      throw new ClusterSettingsError('cluster.seeds', `${JSON.stringify(seed)} is not a host:port address`);
    }
  }
  return key;
}

/** Binds the cluster port and starts the membership; the caller joins. */
export async function openClusterNode(settings: ClusterSettings, options: ClusterNodeOptions): Promise<Membership> {
  const secretKey = checkClusterSettings(settings);
  const transport = await createUdpTcpTransport({
    bind: settings.addr,
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.onTransportError ? { onError: options.onTransportError } : {}),
  });
  const membership = createMembership({
    nodeId: options.nodeId,
    transport,
    settings,
    advertiseAddress: settings.advertise_addr === '' ? transport.address : settings.advertise_addr,
    ...(secretKey ? { secretKey } : {}),
    ...(options.grpcAddress === undefined ? {} : { grpcAddress: options.grpcAddress }),
    ...(options.httpAddress === undefined ? {} : { httpAddress: options.httpAddress }),
    ...(options.delegate ? { delegate: options.delegate } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.random ? { random: options.random } : {}),
    ...(options.loopDelay ? { loopDelay: options.loopDelay } : {}),
  });
  membership.start();
  return membership;
}
