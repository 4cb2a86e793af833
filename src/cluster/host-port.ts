/**
 * `host:port` addresses of the cluster port: parsing, formatting (IPv6 in
 * brackets), and which hosts are loopback.
 */
import { isIP } from 'node:net';

export interface HostPort {
  readonly host: string;
  readonly port: number;
}

export function parseHostPort(address: string): HostPort {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/.exec(address);
  const port = Number(match?.[3]);
  if (!match || port > 65535) throw new RangeError(`not a host:port address: ${JSON.stringify(address)}`);
  return { host: match[1] ?? match[2] ?? '', port };
}

export function formatHostPort(host: string, port: number): string {
  return isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`;
}

export function isLoopbackHost(host: string): boolean {
  if (host === 'localhost' || host === '::1') return true;
  return isIP(host) === 4 && host.startsWith('127.');
}

export function isWildcardHost(host: string): boolean {
  return host === '0.0.0.0' || host === '::';
}
