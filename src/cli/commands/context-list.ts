/**
 * `svc context list`: the contexts of the CLI's config file, the current one
 * marked; credentials show only as set.
 */
import { defineCommand } from '../command.js';
import { contextFilePath, readContexts, SECRET_FIELDS, type CliContext, type ContextField } from '../contexts.js';
import { EXIT } from '../exit-codes.js';
import { OUTPUT_FLAG, outputFormat, render, table } from '../output.js';

function redacted(context: CliContext): CliContext {
  return Object.fromEntries(Object.entries(context).map(([field, value]) => [field, SECRET_FIELDS.has(field as ContextField) ? '(set)' : value]));
}

export const contextListCommand = defineCommand({
  path: ['context', 'list'],
  summary: 'List the contexts; * marks the current one.',
  description: 'Contexts live in $XDG_CONFIG_HOME/svc/config.toml (~/.config/svc/config.toml by default). API keys and tokens are shown as (set).',
  args: [],
  flags: { output: OUTPUT_FLAG },
  examples: [{ description: 'List the contexts', command: 'svc context list' }],
  async run({ values, io }) {
    const path = contextFilePath(io.env, io.home);
    const file = readContexts(path);
    const contexts = Object.entries(file.contexts).map(([name, context]) => ({ name, current: name === file.current_context, ...redacted(context) }));
    const credentials = (c: CliContext): string => [c.api_key === undefined ? '' : 'api key', c.token === undefined ? '' : 'token'].filter((s) => s !== '').join(', ') || '-';
    const tls = (c: CliContext): string => (c.tls_ca_file ?? c.tls_cert_file ?? c.tls_key_file) === undefined ? 'no' : 'yes';
    const rows = (wide: boolean) => () =>
      table([
        ['CURRENT', 'NAME', 'SERVER', 'HTTP_SERVER', 'TLS', 'CREDENTIALS', ...(wide ? ['TLS_CA_FILE', 'TLS_CERT_FILE', 'TLS_KEY_FILE'] : [])],
        ...Object.entries(file.contexts).map(([name, c]) => [
          name === file.current_context ? '*' : '',
          name,
          c.server ?? '-',
          c.http_server ?? '-',
          tls(c),
          credentials(c),
          ...(wide ? [c.tls_ca_file ?? '-', c.tls_cert_file ?? '-', c.tls_key_file ?? '-'] : []),
        ]),
      ]);
    io.out(render(outputFormat(values.output), { file: path, current_context: file.current_context ?? null, contexts }, { table: rows(false), wide: rows(true) }));
    return EXIT.ok;
  },
});
