/** Rate limits per source and per API key, after authentication so a key's own limit applies. */
import type { ServerInterceptor } from '@grpc/grpc-js';
import type { Gate } from '../../security/gate.js';
import { stepInterceptor } from './grpc-step-interceptor.js';

export function rateLimitInterceptor(gate: Gate): ServerInterceptor {
  return stepInterceptor(gate.rateLimit);
}
