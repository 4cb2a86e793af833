/**
 * The settings the membership reads, named as the `cluster` section of the
 * configuration names them, so the server hands `config.cluster` over as it
 * is. Their defaults and formulas live in the configuration schema and
 * docs/cluster.md.
 */

export interface SwimSettings {
  readonly probe_interval: number;
  readonly probe_timeout: number;
  readonly indirect_checks: number;
  readonly suspicion_mult: number;
  readonly suspicion_max_timeout_mult: number;
  readonly gossip_interval: number;
  readonly gossip_nodes: number;
  readonly push_pull_interval: number;
  readonly retransmit_mult: number;
  readonly awareness_max_multiplier: number;
  readonly reconnect_interval: number;
  readonly reconnect_timeout: number;
}

export interface ClusterSettings extends SwimSettings {
  readonly addr: string;
  readonly advertise_addr: string;
  readonly seeds: readonly string[];
  readonly node_id: string;
  readonly secret: string;
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

const POSITIVE: ReadonlyArray<keyof SwimSettings> = [
  'probe_interval',
  'probe_timeout',
  'suspicion_mult',
  'suspicion_max_timeout_mult',
  'gossip_interval',
  'gossip_nodes',
  'push_pull_interval',
  'retransmit_mult',
  'awareness_max_multiplier',
  'reconnect_interval',
];

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
