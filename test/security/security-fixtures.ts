/**
 * Shared by the security unit tests: a real SQLite file in a temporary
 * directory with the security tables, and a simulated clock read as
 * calendar time.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { createSimulatedClock, type SimulatedClock } from '../../supervisors/clock-simulated.js';
import { openSecurityDb } from '../../src/security/store/security-db.js';
import type { WallClock } from '../../src/security/wall-clock.js';

/** 2025-01-01T00:00:00Z: simulated calendar time starts here. */
export const EPOCH = Date.UTC(2025, 0, 1);

export interface SecurityDb {
  readonly dir: string;
  readonly db: Database.Database;
  readonly clock: SimulatedClock;
  readonly wall: WallClock;
  close(): void;
}

export function securityDb(): SecurityDb {
  const dir = mkdtempSync(join(tmpdir(), 'svc-security-'));
  const db = openSecurityDb({ dataDir: dir });
  const clock = createSimulatedClock();
  return {
    dir,
    db,
    clock,
    wall: { now: () => EPOCH + clock.now() },
    close() {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;
