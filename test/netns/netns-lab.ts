/**
 * A network of namespaces for the cluster's scenarios: a hub namespace
 * holding a bridge, and one namespace per node joined to it by a veth pair,
 * on 10.213.0.0/24. nftables in the hub's bridge forward chain makes the
 * faults (cuts between two addresses, one way or both, and random loss),
 * so no rule touches the machine's own namespace. Everything is removed by
 * `destroy`, also after a failure.
 */
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const SUBNET = '10.213.0';
const PREFIX = 'svc43';
export const HUB = `${PREFIX}-hub`;

export const nodeNamespace = (index: number): string => `${PREFIX}-n${index}`;
export const nodeAddress = (index: number): string => `${SUBNET}.${10 + index}`;

function ip(...args: string[]): void {
  execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

/** Why namespaces cannot be made here, or undefined when they can. */
export function unavailableReason(): string | undefined {
  if (process.platform !== 'linux') return `not Linux (${process.platform})`;
  if (process.getuid?.() !== 0) return 'not running as root';
  try {
    execFileSync('nft', ['--version'], { stdio: 'ignore' });
  } catch {
    return 'nft (nftables) is not installed';
  }
  const probe = `${PREFIX}-probe`;
  try {
    ip('netns', 'add', probe);
  } catch (error) {
    return `ip netns add failed: ${String((error as { stderr?: Buffer }).stderr ?? error)}`;
  } finally {
    try {
      ip('netns', 'del', probe);
    } catch {
      // It was never made.
    }
  }
  return undefined;
}

/** Removes every namespace of an earlier run too (a killed test leaves them). */
export function destroy(): void {
  const listed = execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' });
  for (const line of listed.split('\n')) {
    const name = line.split(' ')[0] ?? '';
    if (name.startsWith(`${PREFIX}-`)) ip('netns', 'del', name);
  }
}

export function create(nodes: number): void {
  destroy();
  ip('netns', 'add', HUB);
  ip('-n', HUB, 'link', 'set', 'lo', 'up');
  ip('-n', HUB, 'link', 'add', 'br0', 'type', 'bridge');
  ip('-n', HUB, 'link', 'set', 'br0', 'up');
  for (let i = 1; i <= nodes; i++) {
    const ns = nodeNamespace(i);
    ip('netns', 'add', ns);
    ip('-n', ns, 'link', 'set', 'lo', 'up');
    ip('-n', HUB, 'link', 'add', `veth${i}`, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns);
    ip('-n', HUB, 'link', 'set', `veth${i}`, 'master', 'br0');
    ip('-n', HUB, 'link', 'set', `veth${i}`, 'up');
    ip('-n', ns, 'addr', 'add', `${nodeAddress(i)}/24`, 'dev', 'eth0');
    ip('-n', ns, 'link', 'set', 'eth0', 'up');
  }
  nft(`add table bridge faults
add chain bridge faults forward { type filter hook forward priority 0; policy accept; }`);
}

function nft(script: string): void {
  execFileSync('ip', ['netns', 'exec', HUB, 'nft', '-f', '-'], { input: script, stdio: ['pipe', 'ignore', 'pipe'] });
}

/** Drops what `from` sends to `to` (one way). */
export function cut(from: number, to: number): void {
  nft(`add rule bridge faults forward ip saddr ${nodeAddress(from)} ip daddr ${nodeAddress(to)} drop`);
}

/** Drops `percent` % of all traffic between the nodes, at random. */
export function lose(percent: number): void {
  nft(`add rule bridge faults forward numgen random mod 100 < ${percent} drop`);
}

/** Removes every fault. */
export function heal(): void {
  nft('flush chain bridge faults forward');
}

/** `curl` inside a node's namespace: its status and JSON body. */
export async function http(index: number, method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const args = ['netns', 'exec', nodeNamespace(index), 'curl', '-s', '-m', '5', '-o', '-', '-w', '\n%{http_code}', '-X', method, `http://${nodeAddress(index)}:8080${path}`];
  if (body !== undefined) args.push('-H', 'content-type: application/json', '--data-binary', JSON.stringify(body));
  const { stdout } = await run('ip', args, { maxBuffer: 16 * 1024 * 1024 });
  const split = stdout.lastIndexOf('\n');
  const text = stdout.slice(0, split);
  return { status: Number(stdout.slice(split + 1)), body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
}
