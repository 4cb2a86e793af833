/**
 * The flag the server commands (`start`, `check`, `config`) share, and how
 * they read the configuration: built-in defaults, the TOML file, `SVC_*`
 * variables, then the `--section.key=value` settings of the command line.
 */
import { loadConfig } from '../../config/load.js';
import type { Config } from '../../config/schema.js';
import type { CliIo } from '../cli-io.js';
import type { FlagSpec } from '../command.js';

export const SERVER_CONFIG_FLAG = {
  type: 'string',
  value: 'FILE',
  description: 'The TOML configuration file (default: SVC_CONFIG, else ./svc.toml when present).',
} as const satisfies FlagSpec;

export function serverConfig(io: CliIo, configFile: string | undefined, settings: readonly string[]): Config {
  return loadConfig({ argv: [...settings, ...(configFile === undefined ? [] : ['--config', configFile])], env: io.env, cwd: io.cwd });
}
