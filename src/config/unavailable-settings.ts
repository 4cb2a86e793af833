/**
 * Settings of work scheduled for later (cluster): the schema has them, as
 * part of the configuration contract, but nothing enforces them yet. They
 * are named in a warning, so no operator believes them in force.
 */
import type { Logger } from '../telemetry/logger.js';
import type { Config } from './schema.js';

export function checkUnavailableSettings(config: Config, log?: Logger): void {
  const cluster = [config.cluster.addr === '' ? undefined : 'cluster.addr', config.cluster.seeds.length === 0 ? undefined : 'cluster.seeds'].filter((key) => key !== undefined);
  if (cluster.length > 0) log?.warn({ settings: cluster }, 'clustering is not available in this version; this node runs alone');
}
