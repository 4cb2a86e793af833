/**
 * The configuration as it may be shown (`svc config`, GET
 * /api/v1/system/config): every setting, with the value of each secret
 * replaced by a marker when it is set.
 */
import { CONFIG_SCHEMA, type Config, type SectionName } from './schema.js';
import type { Setting } from './setting.js';

export const REDACTED = '[redacted]';

export type ShownConfig = Record<SectionName, Record<string, unknown>>;

export function redactedConfig(config: Config): ShownConfig {
  const shown = {} as ShownConfig;
  for (const section of Object.keys(CONFIG_SCHEMA) as SectionName[]) {
    const settings = CONFIG_SCHEMA[section] as Record<string, Setting<unknown>>;
    const values = config[section] as Record<string, unknown>;
    shown[section] = Object.fromEntries(
      Object.entries(settings).map(([key, setting]) => [key, setting.secret === true && values[key] !== '' ? REDACTED : values[key]]),
    );
  }
  return shown;
}

/** Every setting as `section.key` → its text form (the form the environment takes), secrets redacted. */
export function configSettingsText(config: Config): Record<string, string> {
  const out: Record<string, string> = {};
  for (const section of Object.keys(CONFIG_SCHEMA) as SectionName[]) {
    const settings = CONFIG_SCHEMA[section] as Record<string, Setting<unknown>>;
    const values = config[section] as Record<string, unknown>;
    for (const [key, setting] of Object.entries(settings)) {
      const value = values[key];
      out[`${section}.${key}`] = setting.secret === true ? (value === '' ? '' : REDACTED) : setting.format(value);
    }
  }
  return out;
}
