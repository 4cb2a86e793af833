import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { CONFIG_SCHEMA, ENV_SHORTCUTS, type Config, type SectionName } from './schema.js';
import { securityRelationError } from './security-relations.js';
import type { Setting } from './setting.js';

/** The server refuses to start on this error; `key` names the offending setting (`runtime.execution_timeout`). */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly key: string, message: string) {
    super(`${key}: ${message}`);
  }
}

export interface ConfigSources {
  /** CLI flags: `--config FILE`, `--section.key=value` or `--section.key value`. */
  argv?: readonly string[];
  env?: Readonly<Record<string, string | undefined>>;
  cwd?: string;
}

export const DEFAULT_CONFIG_FILE = 'svc.toml';

type Raw = Map<string, { value: unknown; from: string }>;

const SECTIONS = Object.keys(CONFIG_SCHEMA) as SectionName[];

function settingOf(section: string, key: string): Setting<unknown> | undefined {
  if (!Object.hasOwn(CONFIG_SCHEMA, section)) return undefined;
  const settings = CONFIG_SCHEMA[section as SectionName] as Record<string, Setting<unknown>>;
  return Object.hasOwn(settings, key) ? settings[key] : undefined;
}

/** Where a value came from: a secret is only taken from the environment. */
type Origin = 'file' | 'env' | 'flag';

function put(raw: Raw, section: string, key: string, value: unknown, from: string, origin: Origin): void {
  const setting = settingOf(section, key);
  if (!setting) throw new ConfigError(`${section}.${key}`, `unknown setting (from ${from})`);
  if (setting.environmentOnly === true && origin !== 'env') {
    throw new ConfigError(`${section}.${key}`, `a secret is read from the environment only (${envName(section as SectionName, key)}), not from ${from}`);
  }
  raw.set(`${section}.${key}`, { value, from });
}

function fromToml(raw: Raw, path: string): void {
  let doc: Record<string, unknown>;
  try {
    doc = parseToml(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new ConfigError(path, `cannot read TOML: ${err instanceof Error ? err.message : String(err)}`);
  }
  for (const [section, body] of Object.entries(doc)) {
    if (!SECTIONS.includes(section as SectionName)) throw new ConfigError(section, `unknown section in ${path}`);
    if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new ConfigError(section, `must be a table in ${path}`);
    for (const [key, value] of Object.entries(body)) put(raw, section, key, value, path, 'file');
  }
}

/** The section an `SVC_<SECTION>_<KEY>` variable names, and the key in it as written; undefined for any other name. */
function sectionVariable(name: string): { section: SectionName; key: string } | undefined {
  if (!name.startsWith('SVC_') || Object.hasOwn(ENV_SHORTCUTS, name)) return undefined;
  const rest = name.slice(4).toLowerCase();
  const section = SECTIONS.find((s) => rest.startsWith(`${s}_`));
  return section === undefined ? undefined : { section, key: rest.slice(section.length + 1) };
}

/** `SVC_RUNTIME_EXECUTION_TIMEOUT` → runtime.execution_timeout; shortcuts first so the full name wins. */
function fromEnv(raw: Raw, env: Readonly<Record<string, string | undefined>>): void {
  for (const [name, [section, key]] of Object.entries(ENV_SHORTCUTS)) {
    const value = env[name];
    if (value !== undefined) put(raw, section, key, value, name, 'env');
  }
  for (const [name, value] of Object.entries(env)) {
    const named = value === undefined ? undefined : sectionVariable(name);
    if (named !== undefined) put(raw, named.section, named.key, value, name, 'env');
  }
}

/**
 * The `SVC_*` variables the loader passes over: neither `SVC_CONFIG`, a
 * shortcut, nor `SVC_<SECTION>_<KEY>` of a known section (a key unknown in a
 * known section is refused by name). They are not refused, since platforms
 * set variables of their own under the same prefix (Kubernetes gives the
 * pods beside a service named `svc` `SVC_SERVICE_HOST` and `SVC_PORT`); but
 * a misspelt section (`SVC_OBSERVABILTY_FORMAT`) must not pass unseen, so
 * `svc start` logs them.
 */
export function ignoredEnvNames(env: Readonly<Record<string, string | undefined>>): string[] {
  return Object.keys(env)
    .filter((name) => name.startsWith('SVC_') && name !== 'SVC_CONFIG' && env[name] !== undefined && !Object.hasOwn(ENV_SHORTCUTS, name) && sectionVariable(name) === undefined)
    .sort();
}

/**
 * `--section.key=value` or `--section.key value`. Any `--a.b` is read as a
 * setting, so a misspelt one (`--runtime.max-agents`) is refused by name
 * instead of being passed over.
 */
export const SETTING_FLAG = /^--([^=.]+)\.([^=]+)(?:=(.*))?$/s;

function fromArgv(raw: Raw, argv: readonly string[]): void {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const match = SETTING_FLAG.exec(arg);
    if (!match) continue;
    const [, section = '', key = '', inline] = match;
    const value = inline ?? argv[++i];
    if (value === undefined) throw new ConfigError(`${section}.${key}`, `flag ${arg} needs a value`);
    put(raw, section, key, value, arg, 'flag');
  }
}

function configFile(sources: ConfigSources, cwd: string): string | undefined {
  const argv = sources.argv ?? [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--config') {
      const file = argv[i + 1];
      if (file === undefined) throw new ConfigError('--config', 'needs a file path');
      return resolve(cwd, file);
    }
    if (arg.startsWith('--config=')) return resolve(cwd, arg.slice('--config='.length));
  }
  const fromEnvVar = sources.env?.SVC_CONFIG;
  if (fromEnvVar) return resolve(cwd, fromEnvVar);
  const fallback = resolve(cwd, DEFAULT_CONFIG_FILE);
  return existsSync(fallback) ? fallback : undefined;
}

function checkRelations(config: Config): void {
  const r = config.runtime;
  if (r.wasm_stack_limit > r.max_stack_size) {
    throw new ConfigError('runtime.wasm_stack_limit', `${r.wasm_stack_limit} bytes exceeds runtime.max_stack_size (${r.max_stack_size})`);
  }
  if (r.execution_timeout > r.max_execution_time) {
    throw new ConfigError('runtime.execution_timeout', `exceeds runtime.max_execution_time (${r.max_execution_time} ms)`);
  }
  if (r.execution_timeout <= 0) throw new ConfigError('runtime.execution_timeout', 'must be positive');
  if (r.agent_startup_timeout <= 0) throw new ConfigError('runtime.agent_startup_timeout', 'must be positive');
  const security = securityRelationError(config);
  if (security !== undefined) throw new ConfigError(security.key, security.message);
}

/**
 * Resolves the configuration from, later winning: built-in defaults, the TOML
 * file (`--config`, `SVC_CONFIG`, or `./svc.toml` if present), the `SVC_*`
 * environment, CLI flags. Throws `ConfigError` naming the first bad key.
 */
export function loadConfig(sources: ConfigSources = {}): Config {
  const cwd = sources.cwd ?? process.cwd();
  const raw: Raw = new Map();
  const file = configFile(sources, cwd);
  if (file !== undefined) {
    if (!existsSync(file)) throw new ConfigError('--config', `file not found: ${file}`);
    fromToml(raw, file);
  }
  if (sources.env) fromEnv(raw, sources.env);
  if (sources.argv) fromArgv(raw, sources.argv);

  const out: Record<string, Record<string, unknown>> = {};
  for (const section of SECTIONS) {
    const settings = CONFIG_SCHEMA[section] as Record<string, Setting<unknown>>;
    const values: Record<string, unknown> = {};
    for (const [key, setting] of Object.entries(settings)) {
      const given = raw.get(`${section}.${key}`);
      if (given === undefined) {
        values[key] = setting.default;
        continue;
      }
      const parsed = setting.parse(given.value);
      if (parsed === undefined) {
        // A secret's value is never repeated, not even a wrong one: it may be a real key with a typo.
        const shown = setting.secret === true ? '(value not shown)' : JSON.stringify(given.value);
        const from = setting.secret === true ? given.from.replace(/=.*$/s, '=…') : given.from;
        throw new ConfigError(`${section}.${key}`, `invalid ${setting.kind}: ${shown} (from ${from})`);
      }
      values[key] = parsed;
    }
    out[section] = Object.freeze(values);
  }
  const config = Object.freeze(out) as unknown as Config;
  checkRelations(config);
  return config;
}

/** The environment variable that sets a key, e.g. `SVC_RUNTIME_EXECUTION_TIMEOUT`. */
export function envName(section: SectionName, key: string): string {
  return `SVC_${section.toUpperCase()}_${key.toUpperCase()}`;
}
