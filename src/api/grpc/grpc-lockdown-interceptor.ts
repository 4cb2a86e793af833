/** Lockdown: UNAVAILABLE for every operation it does not spare. */
import type { ServerInterceptor } from '@grpc/grpc-js';
import type { Gate } from '../../security/gate.js';
import { stepInterceptor } from './grpc-step-interceptor.js';

export function lockdownInterceptor(gate: Gate): ServerInterceptor {
  return stepInterceptor(gate.lockdown);
}
