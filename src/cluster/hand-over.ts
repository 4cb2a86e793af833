/**
 * What travels in a `HandOver` call (cluster.proto): an agent's registry
 * entry and its hibernation snapshot, and what the call's proof signs.
 */
import type { InstanceSnapshot } from '../sandbox/types.js';
import { sha256Hex } from './module-content.js';
import { asRegistryEntry, type RegistryEntry } from './registry-entry.js';

export interface HandOverProto {
  entry_json: string;
  has_snapshot: boolean;
  memory: Buffer;
  globals: string[];
}

export interface HandOver {
  readonly entry: RegistryEntry;
  readonly snapshot: InstanceSnapshot | undefined;
}

const encodeGlobal = (value: number | bigint): string => (typeof value === 'bigint' ? `${value}n` : String(value));
const decodeGlobal = (text: string): number | bigint => (text.endsWith('n') ? BigInt(text.slice(0, -1)) : Number(text));

export function encodeHandOver(handOver: HandOver): HandOverProto {
  const { snapshot } = handOver;
  return {
    entry_json: JSON.stringify(handOver.entry),
    has_snapshot: snapshot !== undefined,
    memory: snapshot === undefined ? Buffer.alloc(0) : Buffer.from(snapshot.memory.buffer, snapshot.memory.byteOffset, snapshot.memory.byteLength),
    globals: snapshot === undefined ? [] : snapshot.globals.map(encodeGlobal),
  };
}

/** Undefined for a request no node of this version sends. */
export function decodeHandOver(request: HandOverProto): HandOver | undefined {
  let doc: unknown;
  try {
    doc = JSON.parse(request.entry_json);
  } catch {
    return undefined;
  }
  const entry = asRegistryEntry(doc);
  if (entry === undefined) return undefined;
  if (!request.has_snapshot) return { entry, snapshot: undefined };
  if (!request.globals.every((g) => /^-?(\d+n|[\d.e+-]+|NaN|Infinity)$/.test(g))) return undefined;
  return { entry, snapshot: { memory: new Uint8Array(request.memory), globals: request.globals.map(decodeGlobal) } };
}

export function handOverContent(request: HandOverProto): string {
  return `${request.entry_json}\n${request.has_snapshot}\n${sha256Hex(request.memory)}\n${request.globals.join(',')}`;
}
