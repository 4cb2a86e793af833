/**
 * `host:port` addresses, the one form every listener setting and the CLI's
 * `--server` take (IPv6 hosts in brackets), both ways. The accepted shape is
 * the configuration's (`address` in src/config/setting.ts), so an address
 * the config admits always parses here and one it refuses never does.
 */
import type { AddressInfo, Server } from 'node:net';

const HOST_PORT = /^(?:\[([0-9a-fA-F:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/;
const MAX_PORT = 65_535;

/** Splits `host:port` or `[v6]:port`; the brackets are not part of the host. Port 0 means an ephemeral port. */
export function splitAddress(address: string): { host: string; port: number } {
  const match = HOST_PORT.exec(address);
  const port = Number(match?.[3]);
  if (match === null || port > MAX_PORT) throw new RangeError(`not a host:port address: ${JSON.stringify(address)}`);
  return { host: match[1] ?? match[2] ?? '', port };
}

/** `host:port`, bracketing an IPv6 host. */
export function joinAddress(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** A listening server's bound address as `host:port`, so port 0 in the configuration reads back as the port the system chose. */
export function formatAddress(info: AddressInfo | string | null): string {
  if (info === null) throw new Error('server is not listening');
  if (typeof info === 'string') return info;
  return joinAddress(info.address, info.port);
}

/** Binds `server` to `address` (port 0: ephemeral) and resolves with the bound `host:port`; a bind error rejects. */
export function listenOn(server: Server, address: string): Promise<string> {
  const { host, port } = splitAddress(address);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(formatAddress(server.address()));
    });
  });
}
