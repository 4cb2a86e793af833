/** `host:port` addresses of the configuration (IPv6 in brackets) to and from what `net` listens on. */
import type { AddressInfo } from 'node:net';

export function parseListenAddress(address: string): { host: string; port: number } {
  const match = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(address);
  const port = Number(match?.[2]);
  if (!match || port > 65535) throw new Error(`invalid listen address ${JSON.stringify(address)}: expected host:port`);
  const host = match[1] as string;
  return { host: host.startsWith('[') ? host.slice(1, -1) : host, port };
}

/** The bound address as `host:port`, so port 0 in the configuration reads back as the port the system chose. */
export function formatAddress(info: AddressInfo | string | null): string {
  if (info === null) throw new Error('server is not listening');
  if (typeof info === 'string') return info;
  return info.family === 'IPv6' ? `[${info.address}]:${info.port}` : `${info.address}:${info.port}`;
}
