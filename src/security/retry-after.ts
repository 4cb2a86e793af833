/**
 * RATE_LIMITED as both doors answer it: `Retry-After` in whole seconds
 * (metadata `retry_after_seconds`, which the REST door turns into the
 * header), at least 1 so a client never retries at once.
 */
import { SvcError } from '../errors/svc-error.js';

export function rateLimited(message: string, reason: string, msBeforeNext: number, extra: Record<string, string> = {}): SvcError {
  const seconds = Math.max(1, Math.ceil(msBeforeNext / 1000));
  return new SvcError('RATE_LIMITED', message, { reason, retry_after_seconds: String(seconds), ...extra });
}
