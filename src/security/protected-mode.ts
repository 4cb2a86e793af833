/**
 * The protected default of DESIGN.md section 9 (Redis's protected mode):
 * with authentication off, the API listeners may only bind loopback
 * addresses unless `allow_unauthenticated` says the operator means it. The
 * metrics listener is open by design and not concerned.
 */
import { isIP } from 'node:net';
import { ConfigError } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { splitAddress } from '../api/host-port.js';

export function isLoopbackHost(host: string): boolean {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (bare === 'localhost') return true;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  if (isIP(bare) === 6) return bare === '::1' || /^::ffff:127\./i.test(bare);
  return false;
}

export function checkProtectedMode(config: Config): void {
  const { security, server } = config;
  if (security.auth_enabled || security.allow_unauthenticated) return;
  for (const [key, address] of [['server.http_addr', server.http_addr], ['server.grpc_addr', server.grpc_addr]] as const) {
    const { host } = splitAddress(address);
    if (!isLoopbackHost(host)) {
      throw new ConfigError(
        'security.allow_unauthenticated',
        `authentication is off and ${key} (${address}) is not a loopback address: turn on security.auth_enabled, or set security.allow_unauthenticated = true to serve an open API there`,
      );
    }
  }
}
