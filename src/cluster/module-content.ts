/**
 * What a node-to-node call carrying a module signs: the sha256 it claims
 * and the hash of the bytes it carries, so the proof covers the module
 * without a second copy of it in the MAC input.
 */
import { createHash } from 'node:crypto';

export const sha256Hex = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

export function moduleContent(sha256: string, module: Uint8Array): string {
  return `${sha256}\n${module.byteLength === 0 ? '' : sha256Hex(module)}`;
}
