/**
 * Settings that do nothing in the configuration given: named in a warning,
 * so no operator believes them in force.
 */
import type { Config } from './schema.js';

/** Seeds are joined through the cluster port: without `cluster.addr` there is none. */
export const SEEDS_WITHOUT_ADDR = 'cluster.seeds is set but cluster.addr is empty; this node runs alone';

/** Where the warning goes: config knows no logger, the server passes its `warn`. */
export type SettingsWarn = (fields: { settings: string[] }, message: string) => void;

export function checkIgnoredSettings(config: Config, warn: SettingsWarn): void {
  if (config.cluster.addr === '' && config.cluster.seeds.length > 0) warn({ settings: ['cluster.seeds'] }, SEEDS_WITHOUT_ADDR);
}
