/** Authorization against the one permission table: PERMISSION_DENIED, metadata `permission`. */
import type { ServerInterceptor } from '@grpc/grpc-js';
import type { Gate } from '../../security/gate.js';
import { stepInterceptor } from './grpc-step-interceptor.js';

export function authorizeInterceptor(gate: Gate): ServerInterceptor {
  return stepInterceptor(gate.authorize);
}
