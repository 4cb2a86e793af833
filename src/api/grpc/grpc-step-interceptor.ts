/**
 * One security step (src/security/gate.ts) as a grpc-js server interceptor.
 * Our RPCs take one request message, and the handler runs at its
 * half-close: the step runs when the message arrives (inside the telemetry
 * interceptor's context, so the call's trace id is active) and passes the
 * message on only once it admitted the call; grpc-js holds the half-close
 * until then. A refusal ends the call with the step's error and the
 * handler never runs. Continuations keep the message's async context, so
 * the handler still runs inside the call's span.
 */
import { AsyncResource } from 'node:async_hooks';
import { ServerInterceptingCall, type Metadata, type ServerInterceptor } from '@grpc/grpc-js';
import type { SecuredCall } from '../../security/gate.js';
import { toGrpcStatus } from './grpc-errors.js';
import { operationOfPath, securedCallOf } from './grpc-secured-call.js';

export type GrpcStep = (call: SecuredCall, request: unknown) => void | Promise<void>;

export function stepInterceptor(step: GrpcStep): ServerInterceptor {
  return (method, next) => {
    if (operationOfPath(method.path) === undefined) return new ServerInterceptingCall(next);
    let metadata: Metadata | undefined;
    return new ServerInterceptingCall(next, {
      start(nextStart) {
        nextStart({
          onReceiveMetadata(received, nextMetadata) {
            metadata = received;
            nextMetadata(received);
          },
          onReceiveMessage(message, nextMessage) {
            const call = metadata === undefined ? undefined : securedCallOf(metadata);
            if (call === undefined) return nextMessage(message);
            const refuse = (err: unknown): void => next.sendStatus(toGrpcStatus(err, call.traceId));
            let pending: void | Promise<void>;
            try {
              pending = step(call, message);
            } catch (err) {
              return refuse(err);
            }
            if (pending === undefined) return nextMessage(message);
            pending.then(AsyncResource.bind(() => nextMessage(message)), AsyncResource.bind(refuse));
          },
        });
      },
    });
  };
}
