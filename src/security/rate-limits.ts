/**
 * Request rate limits with `rate-limiter-flexible` (DESIGN.md section 9),
 * in memory, one process:
 * - per source, keyed by the principal (a key's principal, a token's `sub`,
 *   a certificate's CN) or else the IP address: `rate_limit_per_second`
 *   sustained, plus `rate_limit_burst` more, refilled over
 *   burst / per-second seconds (`BurstyRateLimiter`);
 * - per API key: a sixtieth of the key's hourly rate (`rate_limit_per_key`,
 *   or its own) each minute, plus `burst_limit` more each hour.
 * Past either, RATE_LIMITED with `Retry-After`.
 */
import { BurstyRateLimiter, RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import type { Principal } from './principal.js';
import { rateLimited } from './retry-after.js';

export interface RateLimitSettings {
  enabled: boolean;
  perSecond: number;
  burst: number;
  keyPerHour: number;
  keyBurst: number;
}

export interface RateLimits {
  /** Counts one request; throws RATE_LIMITED past a limit. */
  consume(principal: Principal, sourceIp: string): Promise<void>;
}

const HOUR_SECONDS = 3_600;
const MINUTE_SECONDS = 60;

function bursty(prefix: string, points: number, duration: number, burst: number, burstDuration: number): BurstyRateLimiter {
  return new BurstyRateLimiter(
    new RateLimiterMemory({ keyPrefix: prefix, points, duration }),
    new RateLimiterMemory({ keyPrefix: `${prefix}-burst`, points: burst, duration: burstDuration }),
  );
}

async function consume(limiter: BurstyRateLimiter, key: string): Promise<RateLimiterRes | undefined> {
  try {
    await limiter.consume(key);
    return undefined;
  } catch (rejection) {
    if (rejection instanceof RateLimiterRes) return rejection;
    throw rejection;
  }
}

export function createRateLimits(settings: RateLimitSettings): RateLimits {
  const source = bursty('source', settings.perSecond, 1, settings.burst, Math.max(1, Math.ceil(settings.burst / settings.perSecond)));
  const perKey = new Map<number, BurstyRateLimiter>();

  function keyLimiter(perHour: number): BurstyRateLimiter {
    let limiter = perKey.get(perHour);
    if (limiter === undefined) {
      limiter = bursty(`key-${perHour}`, Math.max(1, Math.ceil(perHour / MINUTE_SECONDS)), MINUTE_SECONDS, settings.keyBurst, HOUR_SECONDS);
      perKey.set(perHour, limiter);
    }
    return limiter;
  }

  return {
    async consume(principal, sourceIp) {
      if (!settings.enabled) return;
      const sourceKey = principal.kind === 'anonymous' ? `ip:${sourceIp}` : `principal:${principal.id}`;
      const limited = await consume(source, sourceKey);
      if (limited !== undefined) throw rateLimited(`more than ${settings.perSecond} requests per second`, 'rate_limit', limited.msBeforeNext);
      if (principal.keyId === undefined) return;
      const perHour = principal.keyRatePerHour === undefined || principal.keyRatePerHour === 0 ? settings.keyPerHour : principal.keyRatePerHour;
      const keyLimited = await consume(keyLimiter(perHour), principal.keyId);
      if (keyLimited !== undefined) throw rateLimited(`the key's rate of ${perHour} requests per hour is spent`, 'key_rate_limit', keyLimited.msBeforeNext, { key_id: principal.keyId });
    },
  };
}
