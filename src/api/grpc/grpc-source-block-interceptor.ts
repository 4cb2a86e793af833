/** The source's block (failed-authentication blocking), first of the security steps. */
import type { ServerInterceptor } from '@grpc/grpc-js';
import type { Gate } from '../../security/gate.js';
import { stepInterceptor } from './grpc-step-interceptor.js';

export function sourceBlockInterceptor(gate: Gate): ServerInterceptor {
  return stepInterceptor(gate.block);
}
