/**
 * The settings the membership reads, named as the `cluster` section of the
 * configuration names them, so the server hands `config.cluster` over as it
 * is. Their defaults and formulas live in the configuration schema and
 * docs/cluster.md.
 */

/** The membership's settings, each a number (milliseconds or a count). */
export const SWIM_KEYS = [
  'probe_interval',
  'probe_timeout',
  'indirect_checks',
  'suspicion_mult',
  'suspicion_max_timeout_mult',
  'gossip_interval',
  'gossip_nodes',
  'push_pull_interval',
  'retransmit_mult',
  'awareness_max_multiplier',
  'reconnect_interval',
  'reconnect_timeout',
] as const;

export type SwimSettings = { readonly [K in (typeof SWIM_KEYS)[number]]: number };

export interface ClusterSettings extends SwimSettings {
  readonly addr: string;
  readonly advertise_addr: string;
  readonly seeds: readonly string[];
  readonly node_id: string;
  readonly secret: string;
  /** Nodes that store an agent's module before its deploy is acknowledged; 1 (this node alone) when unset. */
  readonly replication_factor?: number;
}

/** A setting the membership cannot run with; `key` names it as the configuration does (`cluster.probe_timeout`). */
export class ClusterSettingsError extends Error {
  override readonly name = 'ClusterSettingsError';
  constructor(
    readonly key: string,
    message: string,
  ) {
    super(`${key}: ${message}`);
  }
}

/** All but `indirect_checks` and `reconnect_timeout`, which may be 0 (checked below). */
const POSITIVE = SWIM_KEYS.filter((key) => key !== 'indirect_checks' && key !== 'reconnect_timeout');

/** Checks what each setting's own type cannot: the relations between them. */
export function checkSwimSettings(settings: SwimSettings): void {
  for (const key of POSITIVE) {
    const value = settings[key];
    if (!(Number.isFinite(value) && value > 0)) throw new ClusterSettingsError(`cluster.${key}`, `must be positive, not ${value}`);
  }
  if (!(settings.indirect_checks >= 0)) throw new ClusterSettingsError('cluster.indirect_checks', `must not be negative, not ${settings.indirect_checks}`);
  if (!(settings.reconnect_timeout >= 0)) throw new ClusterSettingsError('cluster.reconnect_timeout', `must not be negative, not ${settings.reconnect_timeout}`);
  if (settings.probe_timeout >= settings.probe_interval) {
    throw new ClusterSettingsError('cluster.probe_timeout', `must be shorter than cluster.probe_interval (${settings.probe_interval} ms): the indirect probes run in between`);
  }
}
