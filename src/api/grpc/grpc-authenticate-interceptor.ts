/** Authentication: the call's principal, which the handlers hand `AgentService` (`client:<principal>`). */
import type { ServerInterceptor } from '@grpc/grpc-js';
import type { Gate } from '../../security/gate.js';
import { stepInterceptor } from './grpc-step-interceptor.js';

export function authenticateInterceptor(gate: Gate): ServerInterceptor {
  return stepInterceptor(gate.authenticate);
}
