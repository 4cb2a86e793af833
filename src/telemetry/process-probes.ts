/**
 * Figures read when metrics are collected rather than on every event:
 * process memory, CPU share, open descriptors and the data directory's size.
 * Each probe is cheap or cached, and none throws: a figure that cannot be
 * read is `undefined` and the gauge keeps its last value, because a failing
 * collect would fail the whole scrape.
 */
import { readdir, stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import type { Clock } from '../../supervisors/index.js';

/** The CPU share is measured over at least this window, so back-to-back collections (a scrape, then the Metrics RPC) agree. */
export const CPU_WINDOW_MS = 5_000;
/** Walking the data directory costs a stat per file; its size is reused for this long. */
export const DISK_USAGE_TTL_MS = 15_000;
/** Entries walked at most per measurement, so a data directory full of files cannot stall a scrape. */
export const DISK_USAGE_MAX_ENTRIES = 100_000;
/** Linux lists a process's open descriptors here. */
export const FD_DIRECTORY = '/proc/self/fd';
/** `st_blocks` counts 512-byte units whatever the file system's block size (stat(2)). */
const STAT_BLOCK_BYTES = 512;

export interface ProcessProbes {
  /** Resident set size: heap, worker threads and every agent's linear memory. */
  memoryBytes(): number;
  /** CPU time used over the last window divided by the window times the cores available (0..1). */
  cpuRatio(): number;
  fileDescriptors(): Promise<number | undefined>;
  /** Allocated size of the data directory, as `du` counts it; undefined without a data directory. */
  diskUsageBytes(): Promise<number | undefined>;
}

export interface ProcessProbeOptions {
  clock: Clock;
  dataDir?: string;
  /** Default: the cores this process may use. */
  cores?: number;
}

async function directoryBytes(root: string): Promise<number> {
  let total = 0;
  let entries = 0;
  const pending = [root];
  while (pending.length > 0 && entries < DISK_USAGE_MAX_ENTRIES) {
    const dir = pending.pop()!;
    const list = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of list) {
      if (++entries > DISK_USAGE_MAX_ENTRIES) break;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) pending.push(path);
      else if (entry.isFile()) total += await stat(path).then((s) => s.blocks * STAT_BLOCK_BYTES, () => 0);
    }
  }
  return total;
}

export function createProcessProbes(options: ProcessProbeOptions): ProcessProbes {
  const { clock, dataDir } = options;
  const cores = options.cores ?? availableParallelism();
  let windowStart = { at: clock.now(), cpu: process.cpuUsage() };
  let ratio = 0;
  let measured = false;
  let disk: { at: number; bytes: number } | undefined;
  let diskReading: Promise<number> | undefined;

  return {
    memoryBytes: () => process.memoryUsage.rss(),
    cpuRatio() {
      const now = clock.now();
      const elapsedMs = now - windowStart.at;
      // Within a window the last figure stands; before the first window ends, the time since start is measured.
      if (elapsedMs <= 0 || (elapsedMs < CPU_WINDOW_MS && measured)) return ratio;
      const used = process.cpuUsage(windowStart.cpu);
      ratio = Math.min(1, (used.user + used.system) / 1000 / (elapsedMs * cores));
      measured = true;
      if (elapsedMs >= CPU_WINDOW_MS) windowStart = { at: now, cpu: process.cpuUsage() };
      return ratio;
    },
    async fileDescriptors() {
      try {
        return (await readdir(FD_DIRECTORY)).length;
      } catch {
        return undefined;
      }
    },
    async diskUsageBytes() {
      if (dataDir === undefined) return undefined;
      const now = clock.now();
      if (disk !== undefined && now - disk.at < DISK_USAGE_TTL_MS) return disk.bytes;
      diskReading ??= directoryBytes(dataDir).finally(() => {
        diskReading = undefined;
      });
      const bytes = await diskReading;
      disk = { at: now, bytes };
      return bytes;
    },
  };
}
