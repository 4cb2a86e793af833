/**
 * The members a node last knew, kept across a restart (the server stores
 * them in its SQLite file), so a restarted node rejoins through them as well
 * as through its seeds, even when every seed is gone.
 */
import type { Member } from './member.js';
import { parseHostPort } from './host-port.js';

export interface KnownMember {
  readonly node_id: string;
  readonly address: string;
}

const FORMAT_VERSION = 1;

export class KnownMembersError extends Error {
  override readonly name = 'KnownMembersError';
}

/** Every member but this node and those that left gracefully (they will not answer). */
export function knownMembers(members: readonly Member[], selfId: string): KnownMember[] {
  return members.filter((m) => m.node_id !== selfId && m.state !== 'left').map((m) => ({ node_id: m.node_id, address: m.address }));
}

export function encodeKnownMembers(members: readonly KnownMember[]): string {
  return JSON.stringify({ version: FORMAT_VERSION, members: members.map(({ node_id, address }) => ({ node_id, address })) });
}

/** Throws `KnownMembersError` on text that is not what `encodeKnownMembers` writes. */
export function decodeKnownMembers(text: string): KnownMember[] {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new KnownMembersError(`not JSON: ${(err as Error).message}`);
  }
  const body = doc as { version?: unknown; members?: unknown };
  if (body === null || typeof body !== 'object' || body.version !== FORMAT_VERSION || !Array.isArray(body.members)) {
    throw new KnownMembersError(`expected {version: ${FORMAT_VERSION}, members: [...]}`);
  }
  return body.members.map((entry: unknown, i) => {
    const m = entry as { node_id?: unknown; address?: unknown };
    if (m === null || typeof m !== 'object' || typeof m.node_id !== 'string' || m.node_id === '' || typeof m.address !== 'string') {
      throw new KnownMembersError(`members[${i}] needs node_id and address`);
    }
    try {
      parseHostPort(m.address);
    } catch {
      throw new KnownMembersError(`members[${i}].address is not host:port: ${JSON.stringify(m.address)}`);
    }
    return { node_id: m.node_id, address: m.address };
  });
}

/** Seeds first, then the known members' addresses, each once, this node's own left out. */
export function rejoinAddresses(seeds: readonly string[], known: readonly KnownMember[], selfAddress: string): string[] {
  return [...new Set([...seeds, ...known.map((m) => m.address)])].filter((address) => address !== selfAddress);
}
