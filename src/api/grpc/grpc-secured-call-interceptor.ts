/**
 * Starts the security pipeline of a gRPC call: when its request arrives,
 * names the operation and reads what the call presents into the call's
 * `SecuredCall` (grpc-secured-call.ts), which the step interceptors after
 * this one work on. Health is open and gets none.
 */
import { ServerInterceptingCall, type Metadata, type ServerInterceptor } from '@grpc/grpc-js';
import { OPERATION_ACCESS } from '../../security/permissions.js';
import type { Security } from '../../security/security.js';
import { callContext } from '../api-call.js';
import { grpcCredentials, grpcSourceIp, grpcUserAgent, operationOfPath, rememberSecuredCall } from './grpc-secured-call.js';

export function securedCallInterceptor(security: Security): ServerInterceptor {
  return (method, next) => {
    const operation = operationOfPath(method.path);
    if (operation === undefined || OPERATION_ACCESS[operation].kind === 'open') return new ServerInterceptingCall(next);
    let metadata: Metadata | undefined;
    return new ServerInterceptingCall(next, {
      start(nextStart) {
        nextStart({
          onReceiveMetadata(received, nextMetadata) {
            metadata = received;
            nextMetadata(received);
          },
          onReceiveMessage(message, nextMessage) {
            // Built here, not with the metadata: the telemetry interceptor makes the call's span active for the message.
            if (metadata !== undefined) {
              rememberSecuredCall(metadata, {
                operation,
                credentials: grpcCredentials(metadata, next, security.apiKeyHeader),
                sourceIp: grpcSourceIp(next),
                userAgent: grpcUserAgent(metadata),
                traceId: callContext().trace_id,
                principal: undefined,
                resource: '',
              });
            }
            nextMessage(message);
          },
        });
      },
    });
  };
}
