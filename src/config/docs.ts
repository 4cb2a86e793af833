import { SEMI_SPACE_EXTRA_MIB, SEMI_SPACE_MIB, SERVER_NODE_FLAGS } from '../node-flags.js';
import { envName } from './load.js';
import { CONFIG_SCHEMA, ENV_SHORTCUTS, type SectionName } from './schema.js';
import type { Setting } from './setting.js';

/** Renders `docs/configuration.md` from the schema, so the doc cannot drift from the code. */
export function renderConfigDocs(): string {
  const lines = [
    '# Configuration',
    '',
    '<!-- Generated from src/config/schema.ts by `npm run docs:config`; edit the schema, not this file. -->',
    '',
    'Sources, later wins: built-in defaults, the TOML file (`--config FILE`, or `SVC_CONFIG`, or `./svc.toml` if present),',
    'the environment (`SVC_<SECTION>_<KEY>`), command-line flags (`--section.key=value`).',
    'An invalid or unknown setting stops the server at start with a message naming the key (exit code 3);',
    '`svc start` refuses any other option or argument as a usage error (exit code 2).',
    'An `SVC_` variable that names no section (`SVC_OBSERVABILTY_FORMAT`, or a platform\'s own such as `SVC_SERVICE_HOST`)',
    'sets nothing; `svc start` names such variables in a warning at start.',
    'Ratios (`trace_sample_rate`, ...) are decimal numbers: `0.25`, `.5`, `1e-2`; `0x1` is refused.',
    '',
    'Durations take `500ms`, `30s`, `5m`, `1h`, `30d` or a number of milliseconds; sizes take `512MB`, `64KiB` or a number of bytes;',
    'CPU takes `100m` (millicores) or a number of cores. Port 0 binds an ephemeral port.',
    '',
    '## Shortcuts',
    '',
    '| variable | sets |',
    '|---|---|',
    ...Object.entries(ENV_SHORTCUTS).map(([name, [section, key]]) => `| \`${name}\` | \`${section}.${key}\` |`),
    '',
    'Where a shortcut and the full variable are both set, the full variable wins.',
    '',
    '```toml',
    '# svc.toml',
    '[server]',
    'http_addr = "127.0.0.1:8080"',
    '',
    '[runtime]',
    'execution_timeout = "2s"',
    'max_module_size = "10MiB"',
    '```',
    '',
    '## Node flags',
    '',
    `\`npm start\` and the \`svc\` executable run Node with \`${SERVER_NODE_FLAGS.join(' ')}\`: a young generation of up to`,
    `two ${SEMI_SPACE_MIB} MiB semi-spaces, collected less often under a heavy message load; untraced message throughput was 1–5% higher with it.`,
    `It costs up to ${SEMI_SPACE_EXTRA_MIB} MiB more resident memory while the load lasts. V8 reads heap flags only at start, and for them`,
    'the command line wins over `NODE_OPTIONS`; to run with another size, start the server as',
    '`node --max-semi-space-size=N dist/src/cli/main.js start`.',
  ];
  for (const [section, settings] of Object.entries(CONFIG_SCHEMA) as Array<[SectionName, Record<string, Setting<unknown>>]>) {
    lines.push('', `## [${section}]`, '', '| key | environment | type | default | meaning |', '|---|---|---|---|---|');
    for (const [key, setting] of Object.entries(settings)) {
      const shown = setting.format(setting.default);
      lines.push(`| \`${key}\` | \`${envName(section, key)}\` | ${setting.kind} | ${shown === '' ? '(empty)' : `\`${shown}\``} | ${setting.doc} |`);
    }
  }
  return `${lines.join('\n')}\n`;
}
