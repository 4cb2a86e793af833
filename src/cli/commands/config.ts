/**
 * `svc config`: the configuration the server would run with, resolved from
 * every source, as JSON (or YAML), secrets redacted.
 */
import { stringify as toYaml } from 'yaml';
import { redactedConfig } from '../../config/redact.js';
import { defineCommand } from '../command.js';
import { EXIT } from '../exit-codes.js';
import { json } from '../output.js';
import { SERVER_CONFIG_FLAG, serverConfig } from './server-flags.js';

export const configCommand = defineCommand({
  path: ['config'],
  summary: 'Print the resolved server configuration.',
  description: 'Every setting after the defaults, the TOML file, SVC_* variables and --section.key=value flags are applied; an invalid one exits 3 naming the key.',
  args: [],
  flags: {
    config: SERVER_CONFIG_FLAG,
    output: { type: 'string', short: 'o', value: 'FORMAT', choices: ['json', 'yaml'], description: 'json (default) or yaml.', group: 'Output' },
  },
  settings: true,
  examples: [
    { description: 'What would the server run with here?', command: 'svc config' },
    { description: 'One setting, with an override', command: 'svc config --runtime.execution_timeout=2s | jq .runtime.execution_timeout' },
  ],
  async run({ values, settings, io }) {
    const config = redactedConfig(serverConfig(io, values.config, settings));
    io.out(values.output === 'yaml' ? toYaml(config) : json(config));
    return EXIT.ok;
  },
});
