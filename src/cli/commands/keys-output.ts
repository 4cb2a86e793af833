/**
 * How the `svc keys` commands print keys: a key with its secret (made or
 * rotated) alone on stdout in table form, so `key=$(svc keys create …)`
 * works, with a note on stderr that it is shown once.
 */
import type { ApiKeyInfo, IssuedKey } from '../../security/security-service-types.js';
import type { CliIo } from '../cli-io.js';
import { render, table, type OutputFormat } from '../output.js';

const shown = (time: string): string => (time === '' ? '-' : time);

export function keysTable(keys: readonly ApiKeyInfo[], wide: boolean): string {
  const header = ['KEY_ID', 'NAME', 'ROLES', 'STATE', 'CREATED', 'EXPIRES', 'GRACE_UNTIL'];
  const rows = keys.map((k) => [k.key_id, k.name, k.roles.join(',') || '-', k.state, k.created_at, shown(k.expires_at), shown(k.grace_until)]);
  if (!wide) return table([header, ...rows]);
  return table([
    [...header, 'ROTATED', 'REVOKED', 'RATE_PER_HOUR'],
    ...keys.map((k, i) => [...(rows[i] ?? []), k.rotated_at, shown(k.revoked_at), k.rate_limit_per_hour === 0 ? 'default' : String(k.rate_limit_per_hour)]),
  ]);
}

export function printIssued(io: CliIo, output: OutputFormat, key: IssuedKey): void {
  io.out(render(output, key, { table: () => `${key.api_key}\n` }));
  if (output === 'table' || output === 'wide') {
    const grace = key.grace_until === '' ? '' : `, the old secret works until ${key.grace_until}`;
    io.err(`svc: key ${key.key_id} (${key.roles.join(',') || 'no roles'})${grace}; the secret is not shown again\n`);
  }
}
