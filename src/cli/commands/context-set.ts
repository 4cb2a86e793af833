/**
 * `svc context set NAME [--server ...]`: creates a context or changes the
 * fields given, keeping the others; `--unset FIELD` removes one.
 */
import { resolve } from 'node:path';
import { defineCommand, UsageError } from '../command.js';
import { checkContextName, checkContextValue, contextFilePath, CONTEXT_FIELDS, readContexts, writeContexts, type CliContext, type ContextField } from '../contexts.js';
import { EXIT } from '../exit-codes.js';

/** Each field's flag; file paths are stored absolute, so the context works from any directory. */
const FIELD_FLAGS: ReadonlyArray<{ flag: 'server' | 'http-server' | 'tls-ca' | 'tls-cert' | 'tls-key' | 'api-key' | 'token'; field: ContextField; path?: true }> = [
  { flag: 'server', field: 'server' },
  { flag: 'http-server', field: 'http_server' },
  { flag: 'tls-ca', field: 'tls_ca_file', path: true },
  { flag: 'tls-cert', field: 'tls_cert_file', path: true },
  { flag: 'tls-key', field: 'tls_key_file', path: true },
  { flag: 'api-key', field: 'api_key' },
  { flag: 'token', field: 'token' },
];

export const contextSetCommand = defineCommand({
  path: ['context', 'set'],
  summary: 'Create a context, or change the fields given of an existing one.',
  description: `A context names a server (its gRPC and REST addresses), the TLS files to reach it with, and the
credentials to present (an API key, sent as X-API-Key, or a bearer token). Fields not given keep
their value. The file is written with mode 0600: it may hold credentials.`,
  args: [{ name: 'NAME', description: 'The context: letters, digits, ., _ or -.' }],
  flags: {
    server: { type: 'string', short: 's', value: 'HOST:PORT', description: "The server's gRPC address." },
    'http-server': { type: 'string', value: 'HOST:PORT', description: "The server's REST address." },
    'tls-ca': { type: 'string', value: 'FILE', description: 'CA certificate(s) to verify the server with (PEM); setting any TLS file switches to TLS.' },
    'tls-cert': { type: 'string', value: 'FILE', description: 'Client certificate for mutual TLS (PEM).' },
    'tls-key': { type: 'string', value: 'FILE', description: "The client certificate's private key (PEM)." },
    'api-key': { type: 'string', value: 'KEY', description: 'An API key (svc_<id>_<secret>), sent as X-API-Key.' },
    token: { type: 'string', value: 'JWT', description: 'A bearer token, sent as Authorization: Bearer.' },
    unset: { type: 'string', value: 'FIELD', multiple: true, choices: CONTEXT_FIELDS, description: 'Remove a field from the context.' },
    use: { type: 'boolean', description: 'Also make it the current context.' },
  },
  examples: [
    { description: 'A local server on non-default ports, made current', command: 'svc context set local --server 127.0.0.1:50052 --http-server 127.0.0.1:8081 --use' },
    { description: 'A remote server over TLS with an API key', command: 'svc context set prod -s svc.example.net:50051 --http-server svc.example.net:8443 --tls-ca ca.pem --api-key "$SVC_KEY"' },
    { description: 'Drop the token of a context', command: 'svc context set prod --unset token' },
  ],
  async run({ values, args: [name = ''], io }) {
    checkContextName(name);
    const path = contextFilePath(io.env, io.home);
    const file = readContexts(path);
    const existing = Object.hasOwn(file.contexts, name) ? file.contexts[name] : undefined;
    const context: CliContext = { ...existing };
    let changed = 0;
    for (const { flag, field, path: isPath } of FIELD_FLAGS) {
      const value = values[flag];
      if (value === undefined) continue;
      if (value === '') throw new UsageError(`--${flag} needs a value; use --unset ${field} to remove it`);
      try {
        context[field] = checkContextValue(field, isPath ? resolve(io.cwd, value) : value, `--${flag}`);
      } catch (error) {
        throw new UsageError(error instanceof Error ? error.message : String(error));
      }
      changed++;
    }
    for (const field of values.unset) {
      if (FIELD_FLAGS.some(({ flag, field: f }) => f === field && values[flag] !== undefined)) throw new UsageError(`${field} is both set and unset`);
      delete context[field as ContextField];
      changed++;
    }
    if (changed === 0 && existing !== undefined && !values.use) throw new UsageError('nothing to change: give a field to set, --unset or --use');
    writeContexts(path, { ...file, contexts: { ...file.contexts, [name]: context }, ...(values.use ? { current_context: name } : {}) });
    io.out(`${existing === undefined ? 'created' : 'updated'} context ${name}${values.use ? ' (current)' : ''}\n`);
    return EXIT.ok;
  },
});
