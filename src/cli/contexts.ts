/**
 * Contexts, as kubectl's kubeconfig has them: named servers with their TLS
 * files and credentials, and the one in use, kept in
 * `$XDG_CONFIG_HOME/svc/config.toml` (`~/.config/svc/config.toml` when the
 * variable is unset or not an absolute path, as the XDG base directory
 * specification says):
 *
 *   current_context = "staging"
 *   [contexts.staging]
 *   server = "svc.example.net:50051"
 *   http_server = "svc.example.net:8080"
 *   tls_ca_file = "/etc/svc/ca.pem"
 *   api_key = "svc_..."
 *
 * The file holds credentials, so it is written with mode 0600 in a directory
 * of mode 0700, and replaced in one rename so a reader never sees half of it.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { parse as parseToml, stringify as toToml } from 'smol-toml';
import { splitAddress } from '../api/host-port.js';
import { ConfigError } from '../config/load.js';
import { UsageError } from './command.js';

/** What a context may hold; every field is optional. */
export const CONTEXT_FIELDS = ['server', 'http_server', 'tls_ca_file', 'tls_cert_file', 'tls_key_file', 'api_key', 'token'] as const;
export type ContextField = (typeof CONTEXT_FIELDS)[number];
export type CliContext = Partial<Record<ContextField, string>>;

/** Fields never printed back: `context list` shows only that they are set. */
export const SECRET_FIELDS: ReadonlySet<ContextField> = new Set(['api_key', 'token']);
const ADDRESS_FIELDS: ReadonlySet<ContextField> = new Set(['server', 'http_server']);

export interface ContextFile {
  current_context?: string;
  contexts: Record<string, CliContext>;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export function contextFilePath(env: Readonly<Record<string, string | undefined>>, home: string): string {
  const xdg = env.XDG_CONFIG_HOME;
  return join(xdg !== undefined && isAbsolute(xdg) ? xdg : join(home, '.config'), 'svc', 'config.toml');
}

export function checkContextName(name: string): string {
  if (!NAME.test(name)) throw new UsageError(`a context name is 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit; got '${name}'`);
  return name;
}

/** Refuses what would fail later with a vaguer message: an address that is not host:port. */
export function checkContextValue(field: ContextField, value: string, where: string): string {
  if (ADDRESS_FIELDS.has(field)) {
    try {
      splitAddress(value);
    } catch {
      throw new ConfigError(where, `${field} takes HOST:PORT, got '${value}'`);
    }
  }
  return value;
}

function isTable(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseContext(path: string, name: string, body: unknown): CliContext {
  const where = `${path}: contexts.${name}`;
  if (!isTable(body)) throw new ConfigError(where, 'must be a table');
  const context: CliContext = {};
  for (const [field, value] of Object.entries(body)) {
    if (!(CONTEXT_FIELDS as readonly string[]).includes(field)) throw new ConfigError(`${where}.${field}`, `unknown field; a context takes ${CONTEXT_FIELDS.join(', ')}`);
    if (typeof value !== 'string') throw new ConfigError(`${where}.${field}`, 'must be a string');
    context[field as ContextField] = checkContextValue(field as ContextField, value, `${where}.${field}`);
  }
  return context;
}

/** The file's contexts; no file is no contexts. A file that does not parse stops the command, naming the key. */
export function readContexts(path: string): ContextFile {
  if (!existsSync(path)) return { contexts: {} };
  let doc: Record<string, unknown>;
  try {
    doc = parseToml(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new ConfigError(path, `cannot read TOML: ${error instanceof Error ? error.message : String(error)}`);
  }
  const file: ContextFile = { contexts: {} };
  for (const [key, value] of Object.entries(doc)) {
    if (key === 'current_context') {
      if (typeof value !== 'string') throw new ConfigError(`${path}: current_context`, 'must be a string');
      file.current_context = value;
    } else if (key === 'contexts') {
      if (!isTable(value)) throw new ConfigError(`${path}: contexts`, 'must be a table');
      for (const [name, body] of Object.entries(value)) file.contexts[name] = parseContext(path, name, body);
    } else {
      throw new ConfigError(`${path}: ${key}`, 'unknown key; the file holds current_context and [contexts.NAME] tables');
    }
  }
  return file;
}

export function writeContexts(path: string, file: ContextFile): void {
  const dir = dirname(path);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const doc: Record<string, unknown> = {};
  if (file.current_context !== undefined) doc.current_context = file.current_context;
  doc.contexts = file.contexts;
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, toToml(doc), { mode: 0o600 });
  // The mode given to writeFileSync applies only to a new file; a leftover temporary keeps its own.
  chmodSync(temporary, 0o600);
  renameSync(temporary, path);
}
