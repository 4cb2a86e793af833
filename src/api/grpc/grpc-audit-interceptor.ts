/**
 * The audit step over gRPC: records the outcome of a change (deploy,
 * undeploy, key changes, lockdown) when the call ends, with what it acted
 * on. Last in the list: only calls every earlier step admitted reach it.
 */
import { ServerInterceptingCall, status as GrpcStatus, type Metadata, type ServerInterceptor } from '@grpc/grpc-js';
import { SvcError } from '../../errors/svc-error.js';
import type { Gate, SecuredCall } from '../../security/gate.js';
import { errorFromStatus } from './grpc-errors.js';
import { operationOfPath, securedCallOf } from './grpc-secured-call.js';

function agentIdOf(message: unknown): string {
  const id = typeof message === 'object' && message !== null ? (message as Record<string, unknown>).agent_id : undefined;
  return typeof id === 'string' ? id : '';
}

export function auditInterceptor(gate: Gate): ServerInterceptor {
  return (method, next) => {
    if (operationOfPath(method.path) === undefined) return new ServerInterceptingCall(next);
    let metadata: Metadata | undefined;
    let admitted: SecuredCall | undefined;
    return new ServerInterceptingCall(next, {
      start(nextStart) {
        nextStart({
          onReceiveMetadata(received, nextMetadata) {
            metadata = received;
            nextMetadata(received);
          },
          onReceiveMessage(message, nextMessage) {
            admitted = metadata === undefined ? undefined : securedCallOf(metadata);
            if (admitted !== undefined && admitted.resource === '') admitted.resource = agentIdOf(message);
            nextMessage(message);
          },
        });
      },
      sendMessage(message, nextMessage) {
        if (admitted !== undefined && admitted.resource === '') admitted.resource = agentIdOf(message);
        nextMessage(message);
      },
      sendStatus(status, nextStatus) {
        if (admitted !== undefined) {
          const failed = status.code === GrpcStatus.OK ? undefined : errorFromStatus({ code: status.code ?? GrpcStatus.UNKNOWN, details: status.details ?? '', metadata: status.metadata as Metadata });
          gate.completed(admitted, failed === undefined ? undefined : new SvcError(failed.code, failed.message, failed.metadata));
          admitted = undefined;
        }
        nextStatus(status);
      },
    });
  };
}
