/**
 * Failed-authentication blocking (DESIGN.md section 9): a source — its IP
 * address, and the key id it named — that fails authentication more than
 * `max_failed_auth_attempts` times within `failed_auth_window` is refused
 * for `block_duration` with RATE_LIMITED, reason `auth_blocked`, before its
 * credential is even looked at. `rate-limiter-flexible`'s brute-force
 * recipe: failures consume points, and the consume past the last point
 * blocks the key.
 */
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { rateLimited } from './retry-after.js';

export interface SourceBlockSettings {
  enabled: boolean;
  maxFailures: number;
  windowMs: number;
  blockMs: number;
}

export interface SourceBlocker {
  /** Throws RATE_LIMITED (auth_blocked) for a blocked IP address or key id. */
  check(sourceIp: string, keyId: string | undefined): Promise<void>;
  /** Counts a failure; resolves true when it blocked the source. */
  failed(sourceIp: string, keyId: string | undefined): Promise<boolean>;
}

const toSeconds = (ms: number): number => Math.max(1, Math.ceil(ms / 1000));

export function createSourceBlocker(settings: SourceBlockSettings): SourceBlocker {
  const failures = new RateLimiterMemory({
    keyPrefix: 'failed-auth',
    points: settings.maxFailures,
    duration: toSeconds(settings.windowMs),
    blockDuration: toSeconds(settings.blockMs),
  });
  const keys = (sourceIp: string, keyId: string | undefined): string[] => (keyId === undefined ? [`ip:${sourceIp}`] : [`ip:${sourceIp}`, `key:${keyId}`]);

  return {
    async check(sourceIp, keyId) {
      if (!settings.enabled) return;
      for (const key of keys(sourceIp, keyId)) {
        const state = await failures.get(key);
        if (state !== null && state.consumedPoints > settings.maxFailures) {
          throw rateLimited('too many failed authentications: try again later', 'auth_blocked', state.msBeforeNext);
        }
      }
    },
    async failed(sourceIp, keyId) {
      if (!settings.enabled) return false;
      let blocked = false;
      for (const key of keys(sourceIp, keyId)) {
        try {
          await failures.consume(key);
        } catch (rejection) {
          if (!(rejection instanceof RateLimiterRes)) throw rejection;
          blocked = true;
        }
      }
      return blocked;
    },
  };
}
