/**
 * Calendar time for the security layer: key and token expiries are epoch
 * milliseconds, stored and compared with what clients send (`exp`). Built
 * from the server's injected `Clock`, so a simulated clock moves key
 * expiries, grace periods and token lifetimes too.
 */
import type { Clock } from '../../supervisors/index.js';

export interface WallClock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

/** A real clock carries its epoch origin; a simulated one starts at the moment it is wrapped. */
export function wallClockFrom(clock: Clock): WallClock {
  const origin = clock.timeOrigin ?? Date.now() - clock.now();
  return { now: () => Math.floor(origin + clock.now()) };
}
