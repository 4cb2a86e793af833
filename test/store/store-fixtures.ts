/** Shared by the store tests and the crash-test writer: temp data dirs and agents to store. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NewAgent } from '../../src/store/types.js';

export interface TempDir {
  path: string;
  remove(): void;
}

export function tempDataDir(): TempDir {
  const path = mkdtempSync(join(tmpdir(), 'svc-store-'));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

export function newAgent(i: number, overrides: Partial<NewAgent> = {}): NewAgent {
  return {
    agentId: `agent-${String(i).padStart(5, '0')}`,
    name: `worker-${i}`,
    capabilities: ['echo', `skill-${i % 3}`],
    resources: { memoryLimit: 16 * 1024 * 1024, cpuShares: 100 + i },
    desiredState: 'running',
    nodeId: 'node-a',
    createdAt: 1_700_000_000_000 + i,
    ...overrides,
  };
}

/** A distinct module per `seed` (the store does not look inside; any bytes will do). */
export function moduleBytes(seed: number, size = 1024): Uint8Array {
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i++) bytes[i] = (seed * 31 + i * 7) & 0xff;
  new DataView(bytes.buffer).setUint32(0, seed);
  return bytes;
}
