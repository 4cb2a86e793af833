/**
 * Settings of the work DESIGN.md section 9 schedules for later (security,
 * cluster): the schema has them, as part of the configuration contract, but
 * nothing enforces them yet. One that would leave the server less safe than
 * the operator asked stops the start; the others are named in a warning, so
 * no operator believes them in force.
 */
import type { Logger } from '../telemetry/logger.js';
import { ConfigError } from './load.js';
import type { Config } from './schema.js';

export function checkUnavailableSettings(config: Config, log?: Logger): void {
  if (config.security.auth_enabled) {
    throw new ConfigError('security.auth_enabled', 'authentication is not available in this version; the server will not start with an API that would be open');
  }
  const cluster = [config.cluster.addr === '' ? undefined : 'cluster.addr', config.cluster.seeds.length === 0 ? undefined : 'cluster.seeds'].filter((key) => key !== undefined);
  if (cluster.length > 0) log?.warn({ settings: cluster }, 'clustering is not available in this version; this node runs alone');
}
